import { readLines } from '../io/line-reader';
import type { Host } from '../remote/host';
import type { DatasetReader, DatasetRecord, RowsOptions } from './dataset-reader';
import { parseJsonLine } from '../io/json-line';

interface IndexEntry {
  offset: number;
  line: number;
}

/**
 * A JSONL dataset read line by line through range reads. A sparse offset index (the byte offset of every `every`-th row,
 * filled in by any read that passes it) makes "row N" a seek to the nearest indexed row plus at most `every` lines.
 * Blank lines are no rows; a malformed line is a row with an `error` (line and byte offset), and reading goes on.
 */
export class JsonlReader implements DatasetReader {
  readonly format = 'jsonl' as const;
  private readonly index: IndexEntry[] = [{ offset: 0, line: 1 }];

  constructor(
    readonly host: Host,
    readonly path: string,
    readonly size: number,
    readonly every = 1024,
  ) {}

  /** How many rows the index can seek to directly (tests and benchmarks). */
  get indexedRows(): number {
    return (this.index.length - 1) * this.every;
  }

  async *rows(opts: RowsOptions = {}): AsyncGenerator<DatasetRecord> {
    const start = opts.start ?? 0;
    const k = Math.min(Math.floor(start / this.every), this.index.length - 1);
    const entry = this.index[k]!;
    let row = k * this.every;
    let line = entry.line;
    for await (const l of readLines(this.host, this.path, { start: entry.offset, includePartial: true, signal: opts.signal })) {
      const lineNo = line++;
      if (l.text.trim() === '') continue;
      if (row % this.every === 0 && this.index.length === row / this.every) this.index.push({ offset: l.start, line: lineNo });
      if (row >= start) yield parseLine(l.text, row, lineNo, l.start, l.complete);
      row++;
    }
  }
}

function parseLine(text: string, index: number, line: number, offset: number, complete: boolean): DatasetRecord {
  const parsed = parseJsonLine(text);
  return parsed.error === undefined
    ? { index, line, offset, value: parsed.value }
    : { index, line, offset, error: malformedLine(line, offset, parsed.error, complete) };
}

/** What a row that is not JSON reads as: where, and why parseJsonLine refused it. */
export function malformedLine(line: number, offset: number, why: string, complete: boolean): string {
  const tail = complete ? '' : ' (the last line has no newline: the file may be truncated)';
  return `line ${line} (byte offset ${offset}): ${why}${tail}`;
}
