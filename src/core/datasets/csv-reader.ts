import { parse, type CsvError } from 'csv-parse';
import type { Host } from '../remote/host';
import type { DatasetReader, DatasetRecord, RowsOptions } from './dataset-reader';

const CHUNK = 1 << 20;

/**
 * A CSV dataset with a header row, parsed as a stream from range reads (csv-parse: quoted fields may hold commas, quotes and
 * newlines, as clinical notes do). A record with the wrong number of fields is a row with an `error` and parsing goes on.
 */
export async function openCsvDataset(host: Host, path: string, size: number): Promise<DatasetReader> {
  const header = await readHeader(host, path);
  return {
    host,
    path,
    format: 'csv',
    size,
    declaredColumns: header,
    rows: (opts: RowsOptions = {}) => csvRows(host, path, opts),
  };
}

async function readHeader(host: Host, path: string): Promise<string[]> {
  const parser = parse({ bom: true, to_line: 1, relax_quotes: false });
  const head = await host.readFile(path, { start: 0, end: 64 * 1024 });
  const records: string[][] = [];
  parser.on('data', (r: string[]) => records.push(r));
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(head);
  });
  return records[0] ?? [];
}

async function* csvRows(host: Host, path: string, opts: RowsOptions): AsyncGenerator<DatasetRecord> {
  const start = opts.start ?? 0;
  const queue: DatasetRecord[] = [];
  let index = 0;
  // The file line where the next record's text starts, counted from each record's raw text: csv-parse's own count
  // (`info.lines`) counts a quoted CRLF as two lines, so every row after a clinical note with Windows line ends drifted.
  let nextLine = 2; // after the header
  /**
   * The line a record starts on (after the blank lines its raw text begins with), and moves past its text. Line breaks
   * are CRLF, LF or a lone CR, as editors count them (csv-parse's raw text keeps only the CR of a CRLF record delimiter).
   */
  const lineOf = (raw: string | undefined): number => {
    let line = nextLine;
    let leading = true;
    for (let i = 0; raw !== undefined && i < raw.length; i++) {
      const c = raw[i];
      if (c === '\r' || c === '\n') {
        if (c === '\r' && raw[i + 1] === '\n') i++;
        nextLine++;
        if (leading) line++;
      } else leading = false;
    }
    return line;
  };
  const parser = parse({
    bom: true,
    columns: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (rec: { record: Record<string, string>; raw: string }) => {
      queue.push({ index: index++, line: lineOf(rec.raw), value: rec.record });
      return null; // delivered through the queue, in order with the skipped records
    },
    on_skip: (err: CsvError | undefined, raw?: string) => {
      const line = lineOf(raw);
      queue.push({ index: index++, line, error: `line ${line}: ${err ? csvMessage(err) : 'malformed CSV record'}` });
      return undefined;
    },
  });
  parser.resume();
  const ended = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  const drain = function* () {
    for (const r of queue.splice(0)) if (r.index >= start) yield r;
  };
  try {
    for (let pos = 0; ;) {
      opts.signal?.throwIfAborted();
      const chunk = await host.readFile(path, { start: pos, end: pos + CHUNK });
      pos += chunk.length;
      if (chunk.length > 0) await new Promise<void>((resolve, reject) => parser.write(chunk, (err) => (err ? reject(err) : resolve())));
      yield* drain();
      if (chunk.length < CHUNK) break;
    }
    parser.end();
    await ended;
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    // Not skippable (e.g. a quote never closed): the rest of the file is inside that field.
    yield* drain();
    yield { index, line: nextLine, error: `line ${nextLine}: ${err instanceof Error ? csvMessage(err) : String(err)}` };
    parser.destroy();
    return;
  } finally {
    if (!parser.destroyed) parser.destroy();
  }
  yield* drain();
}

/** csv-parse's message without the line it names ("on line 6"): its count drifts after a quoted CRLF; ours leads the message. */
function csvMessage(err: Error): string {
  return err.message.replace(/ (on|at) line \d+/, '');
}
