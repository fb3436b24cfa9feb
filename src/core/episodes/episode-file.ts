import { basename } from 'node:path';
import { parquetReadObjects, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import type { Host } from '../remote/host';
import { readLines } from '../io/line-reader';
import { parseJsonLine } from '../io/json-line';
import { openParquetFile, parquetWhy } from '../io/parquet-file';
import { MalformedRecordError, type Episode, type MalformedRecord } from './episode';
import { EpisodeTable } from './episode-table';
import { jsonlFormat, messagesRecord, trlRecord, verlRecord, type EpisodeRecord } from './records';

interface IndexProgress {
  bytes: number;
  totalBytes: number;
  episodes: number;
  done: boolean;
}

interface IndexOptions {
  signal?: AbortSignal;
  /** Called every few thousand episodes and at the end. */
  onProgress?: (p: IndexProgress) => void;
}

/** One step's file of episodes (a verl dump, a trajectory JSONL, a TRL completions parquet) on a host. */
export interface EpisodeFile {
  readonly host: Host;
  readonly path: string;
  readonly step: number;
  readonly format: 'jsonl' | 'parquet';
  /** Records that could not be read, with file and line (filled while indexing or streaming). */
  readonly malformed: MalformedRecord[];
  /** The index: built by one streaming pass, extended when the file has grown, cached otherwise. */
  index(opts?: IndexOptions): Promise<EpisodeTable>;
  /** The index as far as it is built (possibly empty), without waiting. */
  partial(): EpisodeTable;
  /** The first episode, read without the index (what the viewer shows while the index is built). */
  first(): Promise<Episode | undefined>;
  /** Episode `i` of the index: one range read. */
  read(i: number): Promise<Episode>;
  /** Every record in order, without building the index (the CLI's stream). */
  stream(signal?: AbortSignal): AsyncGenerator<Episode | MalformedRecord>;
  /** Rows whose prompt or response contains `query` (case-insensitive). */
  search(query: string, signal?: AbortSignal): Promise<Uint8Array>;
}

function toEpisode(rec: EpisodeRecord, step: number, index: number, location: Episode['location']): Episode {
  return {
    step: rec.step ?? step,
    index,
    score: rec.score,
    turns: rec.turns(),
    groundTruth: rec.groundTruth,
    ...(rec.dataSource !== undefined ? { dataSource: rec.dataSource } : {}),
    extra: rec.extra,
    raw: { prompt: rec.prompt, response: rec.response },
    ...(rec.advantage !== undefined ? { advantage: rec.advantage } : {}),
    location,
  };
}

/** Parses one JSONL line into a record; throws MalformedRecordError with the file and line. */
function parseJsonlRecord(text: string, file: string, line: number): EpisodeRecord {
  const { value: obj, error } = parseJsonLine(text);
  if (error !== undefined) throw new MalformedRecordError({ file, line, message: error });
  const format = jsonlFormat(obj);
  if (format !== 'verl' && format !== 'messages') throw new MalformedRecordError({ file, line, message: format });
  const rec = obj as Record<string, unknown>;
  return format === 'verl' ? verlRecord(rec) : messagesRecord(rec);
}

/** The step in a file name: verl's `12.jsonl`, TRL's `completions_00012.parquet`; else undefined. */
export function stepFromName(name: string): number | undefined {
  const m = /(?:^|_)(\d+)\.(?:jsonl|parquet)$/.exec(basename(name));
  return m ? Number(m[1]) : undefined;
}

const PROGRESS_EVERY = 4096;

/** A JSONL file (verl dump or trajectories) read through an offset index of its lines. */
export class JsonlEpisodeFile implements EpisodeFile {
  readonly format = 'jsonl' as const;
  readonly malformed: MalformedRecord[] = [];
  private readonly table = new EpisodeTable();
  private indexedEnd = 0;
  private linesSeen = 0;
  private indexed: { size: number; mtimeMs: number } | undefined;
  private building: Promise<EpisodeTable> | undefined;

  constructor(
    readonly host: Host,
    readonly path: string,
    readonly step: number,
  ) {}

  partial(): EpisodeTable {
    return this.table;
  }

  index(opts: IndexOptions = {}): Promise<EpisodeTable> {
    this.building ??= this.build(opts).finally(() => (this.building = undefined));
    return this.building;
  }

  private async build(opts: IndexOptions): Promise<EpisodeTable> {
    const st = await this.host.stat(this.path);
    if (this.indexed && st.size === this.indexed.size && st.mtimeMs === this.indexed.mtimeMs) return this.table;
    if (st.size < this.indexedEnd)
      throw new Error(`${this.host.name}:${this.path}: the file shrank while it was being read (rewritten?): reopen it`);
    let n = 0;
    for await (const l of readLines(this.host, this.path, {
      start: this.indexedEnd,
      signal: opts.signal,
      chunkSize: 4 << 20,
      includePartial: true,
    })) {
      const lineNo = this.linesSeen + 1;
      if (!l.text.trim()) {
        if (l.complete) [this.linesSeen, this.indexedEnd] = [lineNo, l.end];
        continue;
      }
      try {
        const rec = parseJsonlRecord(l.text, this.path, lineNo);
        this.table.add(rec, { start: l.start, end: l.end, line: lineNo });
        [this.linesSeen, this.indexedEnd] = [lineNo, l.end];
      } catch (err) {
        if (!(err instanceof MalformedRecordError)) throw err;
        // A last line without a newline may still be being written: reported, and read again when the file grows.
        if (l.complete) [this.linesSeen, this.indexedEnd] = [lineNo, l.end];
        if (!this.malformed.some((m) => m.line === lineNo)) {
          this.malformed.push(
            l.complete
              ? err.record
              : { ...err.record, message: `${err.record.message} (the last line has no newline: cut off, or still being written)` },
          );
        }
      }
      if (++n % PROGRESS_EVERY === 0) opts.onProgress?.({ bytes: l.end, totalBytes: st.size, episodes: this.table.length, done: false });
    }
    this.indexed = { size: st.size, mtimeMs: st.mtimeMs };
    opts.onProgress?.({ bytes: this.indexedEnd, totalBytes: st.size, episodes: this.table.length, done: true });
    return this.table;
  }

  async first(): Promise<Episode | undefined> {
    if (this.table.length) return this.read(0);
    let lineNo = 0;
    for await (const l of readLines(this.host, this.path, { chunkSize: 256 << 10 })) {
      lineNo++;
      if (!l.text.trim()) continue;
      try {
        return toEpisode(parseJsonlRecord(l.text, this.path, lineNo), this.step, 0, { file: this.path, line: lineNo });
      } catch (err) {
        if (!(err instanceof MalformedRecordError)) throw err;
      }
    }
    return undefined;
  }

  async read(i: number): Promise<Episode> {
    if (i >= this.table.length && !this.indexed) await this.index();
    if (i < 0 || i >= this.table.length) throw new RangeError(`${this.path}: no episode ${i} (the index has ${this.table.length})`);
    const buf = await this.host.readFile(this.path, { start: this.table.start[i]!, end: this.table.end[i]! });
    const line = this.table.line[i]!;
    return toEpisode(parseJsonlRecord(buf.toString('utf8').replace(/\r?\n$/, ''), this.path, line), this.step, i, {
      file: this.path,
      line,
    });
  }

  async *stream(signal?: AbortSignal): AsyncGenerator<Episode | MalformedRecord> {
    let lineNo = 0;
    let index = 0;
    for await (const l of readLines(this.host, this.path, { signal, chunkSize: 4 << 20, includePartial: true })) {
      lineNo++;
      if (!l.text.trim()) continue;
      try {
        if (!l.complete)
          throw new MalformedRecordError({
            file: this.path,
            line: lineNo,
            message: 'the last line has no newline (cut off, or still being written)',
          });
        yield toEpisode(parseJsonlRecord(l.text, this.path, lineNo), this.step, index++, { file: this.path, line: lineNo });
      } catch (err) {
        if (!(err instanceof MalformedRecordError)) throw err;
        yield err.record;
      }
    }
  }

  async search(query: string, signal?: AbortSignal): Promise<Uint8Array> {
    const table = await this.index({ signal });
    const hits = new Uint8Array(table.length);
    const q = query.toLowerCase();
    // The raw line holds JSON-escaped text: match the escaped query, and parse only lines with \u escapes.
    const escaped = JSON.stringify(q).slice(1, -1);
    let row = 0;
    for await (const l of readLines(this.host, this.path, {
      signal,
      chunkSize: 4 << 20,
      end: table.length ? table.end[table.length - 1] : 0,
    })) {
      while (row < table.length && table.start[row]! < l.start) row++;
      if (row >= table.length) break;
      if (table.start[row] !== l.start) continue;
      const lower = l.text.toLowerCase();
      if (lower.includes(escaped)) hits[row] = 1;
      else if (lower.includes('\\u')) {
        const rec = parseJsonlRecord(l.text, this.path, table.line[row]!);
        if ((rec.prompt + '\n' + rec.response).toLowerCase().includes(q)) hits[row] = 1;
      }
    }
    return hits;
  }
}

/** A TRL completions parquet, read with hyparquet through range reads of the host. */
export class ParquetEpisodeFile implements EpisodeFile {
  readonly format = 'parquet' as const;
  readonly malformed: MalformedRecord[] = [];
  private table = new EpisodeTable();
  private file: { buf: AsyncBuffer; meta: FileMetaData; mtimeMs: number } | undefined;
  private building: Promise<EpisodeTable> | undefined;

  constructor(
    readonly host: Host,
    readonly path: string,
    readonly step: number,
  ) {}

  partial(): EpisodeTable {
    return this.table;
  }

  private async open(): Promise<{ buf: AsyncBuffer; meta: FileMetaData }> {
    const st = await this.host.stat(this.path);
    if (this.file && this.file.mtimeMs === st.mtimeMs && this.file.buf.byteLength === st.size) return this.file;
    const { file: buf, metadata: meta } = await openParquetFile(this.host, this.path, st.size);
    this.file = { buf, meta, mtimeMs: st.mtimeMs };
    this.table = new EpisodeTable();
    this.malformed.length = 0;
    return this.file;
  }

  private async rows(rowStart?: number, rowEnd?: number, columns?: string[]): Promise<Record<string, unknown>[]> {
    const { buf, meta } = await this.open();
    try {
      return await parquetReadObjects({ file: buf, metadata: meta, rowStart, rowEnd, columns });
    } catch (err) {
      throw new Error(`${this.host.name}:${this.path}: cannot decode its rows: ${parquetWhy(err)}`, { cause: err });
    }
  }

  index(opts: IndexOptions = {}): Promise<EpisodeTable> {
    this.building ??= this.build(opts).finally(() => (this.building = undefined));
    return this.building;
  }

  private async build(opts: IndexOptions): Promise<EpisodeTable> {
    const before = this.file;
    const { buf } = await this.open();
    if (before === this.file && this.table.length) return this.table;
    const rows = await this.rows();
    opts.signal?.throwIfAborted();
    rows.forEach((row, i) => {
      const rec = this.record(row, i);
      if (rec) this.table.add(rec, { start: i, end: i + 1, line: i });
    });
    opts.onProgress?.({ bytes: buf.byteLength, totalBytes: buf.byteLength, episodes: this.table.length, done: true });
    return this.table;
  }

  private record(row: Record<string, unknown>, i: number): EpisodeRecord | undefined {
    if (!('completion' in row) || !('prompt' in row)) {
      this.malformed.push({ file: this.path, row: i, message: 'a TRL completions row needs prompt and completion columns' });
      return undefined;
    }
    return trlRecord(row);
  }

  async first(): Promise<Episode | undefined> {
    const rows = await this.rows(0, 1);
    const rec = rows[0] && this.record(rows[0], 0);
    return rec ? toEpisode(rec, this.step, 0, { file: this.path, row: 0 }) : undefined;
  }

  async read(i: number): Promise<Episode> {
    const table = this.table.length ? this.table : await this.index();
    if (i < 0 || i >= table.length) throw new RangeError(`${this.path}: no episode ${i} (the file has ${table.length})`);
    const row = table.start[i]!;
    const [obj] = await this.rows(row, row + 1);
    const rec = obj && this.record(obj, row);
    if (!rec) throw new MalformedRecordError({ file: this.path, row, message: 'row could not be read' });
    return toEpisode(rec, this.step, i, { file: this.path, row });
  }

  async *stream(signal?: AbortSignal): AsyncGenerator<Episode | MalformedRecord> {
    const rows = await this.rows();
    let index = 0;
    for (const [i, row] of rows.entries()) {
      signal?.throwIfAborted();
      const rec = this.record(row, i);
      yield rec ? toEpisode(rec, this.step, index++, { file: this.path, row: i }) : this.malformed.at(-1)!;
    }
  }

  async search(query: string, signal?: AbortSignal): Promise<Uint8Array> {
    const table = await this.index({ signal });
    const rows = await this.rows(undefined, undefined, ['prompt', 'completion']);
    const q = query.toLowerCase();
    const hits = new Uint8Array(table.length);
    for (let i = 0; i < table.length; i++) {
      const r = rows[table.start[i]!];
      if (r && `${JSON.stringify(r.prompt)}\n${JSON.stringify(r.completion)}`.toLowerCase().includes(JSON.stringify(q).slice(1, -1)))
        hits[i] = 1;
    }
    return hits;
  }
}

export function openEpisodeFile(host: Host, path: string, step: number): EpisodeFile {
  return path.endsWith('.parquet') ? new ParquetEpisodeFile(host, path, step) : new JsonlEpisodeFile(host, path, step);
}
