import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { z } from 'zod';
import type { Host } from '../remote/host';
import { BLOCK_BYTES, processBlockSpill, type BlockSpill } from './block-spill';
import { Float64Column, type BlockSource } from './float64-column';
import { parserStateSchema, type ParserState } from './parser-state';
import type { MetricSeries } from './metric-series';
import { errorMessage } from '../errors/located-error';

/**
 * The file's first bytes: what it is and which version (a new layout, or a parser fix that changes what a file holds,
 * gets a new one, and older files are stale). 2: files of version 1 could hold 0 for the value that made a verl step
 * line's metrics pass 64 (then 128, ...) on the first such line.
 */
const MAGIC = Buffer.from('MEDRLMC2');
/** Any version's first bytes. */
const MAGIC_STEM = MAGIC.subarray(0, MAGIC.length - 1);

/** A cache file of another version: not damaged, only stale (removed without a word, and the log read whole). */
class OtherVersion extends Error {}
/**
 * The cache holds while these bytes of the log are as they were: 4 KB at its start, before the cached offset, and at
 * 14 places evenly between (64 KB read to tell a rewritten log, where hashing all of it would cost what parsing does).
 */
const SAMPLE_BYTES = 4096;
const SAMPLES = 16;
/** Logs under this size parse in a few tens of milliseconds: not worth a file. */
export const DEFAULT_MIN_LOG_BYTES = 8 << 20;
/** All cache files together, oldest used first out. Ten runs of 100k steps × 64 metrics take about 520 MB. */
export const DEFAULT_MAX_CACHE_BYTES = 1 << 30;
/** Blocks go to the file in batches of this many bytes (one write each). */
const WRITE_BATCH = 1 << 20;

const headerSchema = z.object({
  host: z.string(),
  path: z.string(),
  /** Every line before this byte of the log is in the file. */
  offset: z.number().int().nonnegative(),
  /** sha256 of the log's sampled bytes before `offset`. */
  sampled: z.string(),
  rows: z.number().int().nonnegative(),
  stepsAt: z.number().int().nonnegative(),
  observedAt: z.number().int().nonnegative(),
  parser: parserStateSchema,
  columns: z.array(
    z.object({
      name: z.string(),
      length: z.number().int().nonnegative(),
      blocks: z.number().int().nonnegative(),
      at: z.number().int().nonnegative(),
    }),
  ),
});
type Header = z.infer<typeof headerSchema>;

/** A parse taken from a cache file: the log is read on from `offset`. */
export interface CachedParse {
  offset: number;
  parser: ParserState;
  steps: number[];
  observed: number[];
  columns: Array<[string, Float64Column]>;
}

/** The open cache file restored columns read their blocks from; closed once every column of it is collected. */
class CacheFileBlocks {
  constructor(
    readonly fd: number,
    readonly file: string,
  ) {}

  source(at: number): BlockSource {
    return {
      read: (k, into) => {
        const pos = at + k * BLOCK_BYTES;
        const n = readSync(this.fd, into, 0, BLOCK_BYTES, pos);
        if (n < BLOCK_BYTES) throw new Error(`metrics cache file ${this.file}: it ends before byte ${pos + BLOCK_BYTES}`);
      },
    };
  }
}

const closeWhenCollected = new FinalizationRegistry<number>((fd) => closeSync(fd));

let tmpCount = 0;

/** What a parse worker is asked: parse the local log at `path` into the cache in `dir` (parse-worker.ts). */
export interface CacheFillJob {
  dir: string;
  maxBytes: number;
  minLogBytes: number;
  /** The local host's name (cache files are known by host and path). */
  host: string;
  path: string;
}

/**
 * Runs fill jobs on other threads; resolves with the problems the worker's cache reported. A job whose `signal` aborts
 * stops (or never starts) and rejects with the signal's reason. `onRead` hears how many bytes of the log the worker has
 * read, as it reads.
 */
export interface CacheFiller {
  fill(job: CacheFillJob, signal?: AbortSignal, onRead?: (read: number) => void): Promise<string[]>;
}

/**
 * Parsed metrics logs on this machine, one file per log (by host and path), so a dashboard opened again reads from
 * where the last one stopped instead of the whole log: a 211 MB verl log is a 52 MB file of 64 KB column blocks,
 * read only as charts ask for them. A file holds the log's offset and a hash of 64 KB sampled from the log before it
 * (its start, its end, and evenly between): a log rewritten since (a resumed verl run truncates metrics.jsonl) no
 * longer matches and is read from the start. Only numbers and metric names are kept, never text of a log (a parse
 * with problems is not cached, their messages quote the log). The folder is 0700 and its files 0600.
 */
export class MetricsCache {
  /**
   * The cache in `dir` as a size setting asks (`medrl.metrics.cacheSizeMB`): none for 0 or less, and what the folder
   * kept is removed (a failure to remove it goes to `onProblem`).
   */
  static sized(dir: string, sizeMB: number, onProblem: (message: string) => void, filler?: CacheFiller): MetricsCache | undefined {
    if (sizeMB > 0) return new MetricsCache(dir, { maxBytes: sizeMB * 1e6, onProblem, filler });
    rm(dir, { recursive: true, force: true }).catch((err: unknown) =>
      onProblem(`metrics cache: could not remove ${dir} (${errorMessage(err)})`),
    );
    return undefined;
  }

  readonly minLogBytes: number;
  readonly maxBytes: number;
  private readonly onProblem: (message: string) => void;
  private readonly spill: BlockSpill;
  private readonly filler: CacheFiller | undefined;

  constructor(
    readonly dir: string,
    opts: {
      minLogBytes?: number;
      maxBytes?: number;
      /** What went wrong with a cache file (damaged, or not written): the log is read whole instead. */
      onProblem?: (message: string) => void;
      spill?: BlockSpill;
      /** Parses a big local log into this cache on another thread (cache-fill-workers.ts), so the caller's stays free. */
      filler?: CacheFiller;
    } = {},
  ) {
    this.minLogBytes = opts.minLogBytes ?? DEFAULT_MIN_LOG_BYTES;
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_CACHE_BYTES;
    this.onProblem = opts.onProblem ?? (() => {});
    this.spill = opts.spill ?? processBlockSpill;
    this.filler = opts.filler;
  }

  /** Whether `fill` can parse a log of `host` on another thread. */
  canFill(host: Host): boolean {
    return this.filler !== undefined && host.kind === 'local';
  }

  /**
   * Parses the local log at `path` into this cache on another thread; `load` then finds it, unless the log is one a cache
   * does not keep (TRL console output, unreadable lines). What went wrong goes to onProblem: the caller parses it itself.
   * Once `signal` aborts (the caller no longer waits for it), the parse stops and nothing is written. `onRead`: how many
   * bytes the worker has read, as it reads.
   */
  async fill(host: Host, path: string, signal?: AbortSignal, onRead?: (read: number) => void): Promise<void> {
    if (!this.canFill(host)) return;
    try {
      const problems = await this.filler!.fill(
        {
          dir: this.dir,
          maxBytes: this.maxBytes,
          minLogBytes: this.minLogBytes,
          host: host.name,
          path,
        },
        signal,
        onRead,
      );
      for (const p of problems) this.onProblem(p);
    } catch (err) {
      // Stopped as the caller asked: not a problem with the cache.
      if (signal?.aborted) return;
      this.onProblem(`metrics cache: could not parse ${path} on a worker thread (${errorMessage(err)}); it is read here`);
    }
  }

  private fileOf(host: Host, path: string): string {
    return join(this.dir, `${createHash('sha256').update(`${host.name}\0${path}`).digest('hex')}.bin`);
  }

  /** The cached parse of `path` on `host`, if there is one and the log still starts and runs on as it did. */
  async load(host: Host, path: string): Promise<CachedParse | undefined> {
    const file = this.fileOf(host, path);
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let kept = false;
    try {
      let header: Header;
      let steps: number[];
      let observed: number[];
      try {
        header = readHeader(fd, file);
        steps = readDoubles(fd, file, header.stepsAt, header.rows);
        observed = readDoubles(fd, file, header.observedAt, header.rows);
      } catch (err) {
        if (!(err instanceof OtherVersion))
          this.onProblem(`metrics cache file ${file} is damaged and was removed; the log is read whole (${errorMessage(err)})`);
        await unlink(file);
        return undefined;
      }
      if (header.host !== host.name || header.path !== path) return undefined;
      // The host's errors (a dropped connection) are the poll's: they leave the file alone.
      const size = (await host.stat(path)).size;
      if (size < header.offset || !(await this.sameLog(host, path, header))) {
        // The log was rewritten: this file can never match it again.
        await unlink(file);
        return undefined;
      }
      const blocks = new CacheFileBlocks(fd, file);
      closeWhenCollected.register(blocks, fd);
      kept = true;
      const columns = header.columns.map(
        (c) => [c.name, Float64Column.restored(blocks.source(c.at), c.length, c.blocks, this.spill)] as [string, Float64Column],
      );
      const now = new Date();
      await utimes(file, now, now); // used: last out when the folder is trimmed
      return { offset: header.offset, parser: header.parser, steps, observed, columns };
    } finally {
      if (!kept) closeSync(fd);
    }
  }

  /**
   * Writes the parse of `path` up to `offset` (every line before it is in `series`), replacing any earlier file of the
   * log; then trims the folder to its size, oldest used first. Failures are reported through onProblem, not thrown: the
   * dashboard works without a cache.
   */
  async save(host: Host, path: string, offset: number, series: MetricSeries, parser: ParserState): Promise<void> {
    const file = this.fileOf(host, path);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const sampled = await this.fingerprint(host, path, offset);
      const rows = series.length;
      const entries = series.columnEntries();
      const header: Header = {
        host: host.name,
        path,
        offset,
        sampled,
        rows,
        stepsAt: 0,
        observedAt: 0,
        parser,
        columns: entries.map(([name, col]) => ({ name, length: col.length, blocks: col.blockCount, at: 0 })),
      };
      // Positions depend on the header's length, which depends on the positions: lay out until it stops growing.
      for (let prev = -1, len = headerBytes(header).length; len !== prev; prev = len, len = headerBytes(header).length) {
        let at = align(MAGIC.length + 4 + len, BLOCK_BYTES);
        header.stepsAt = at;
        at += align(rows * 8, BLOCK_BYTES);
        header.observedAt = at;
        at += align(rows * 8, BLOCK_BYTES);
        for (const c of header.columns) {
          c.at = at;
          at += c.blocks * BLOCK_BYTES;
        }
      }
      // Each thread counts its own: a parse worker's (parse-worker.ts) and the main thread's names must differ.
      const tmp = `${file}.${process.pid}.${threadId}.${++tmpCount}.tmp`;
      const fh = await open(tmp, 'wx', 0o600);
      try {
        const json = headerBytes(header);
        const lead = Buffer.alloc(MAGIC.length + 4);
        MAGIC.copy(lead);
        lead.writeUInt32LE(json.length, MAGIC.length);
        await fh.write(Buffer.concat([lead, json]), 0, lead.length + json.length, 0);
        await fh.write(Buffer.from(Float64Array.from(series.steps).buffer), 0, rows * 8, header.stepsAt);
        await fh.write(Buffer.from(Float64Array.from(series.observedTimes()).buffer), 0, rows * 8, header.observedAt);
        await writeBlocks(fh, entries, header.columns);
      } catch (err) {
        await fh.close();
        await unlink(tmp);
        throw err;
      }
      await fh.close();
      await rename(tmp, file);
      await this.trim(file);
    } catch (err) {
      this.onProblem(`metrics cache: could not write ${file} (${errorMessage(err)}); the log will be read whole next time`);
    }
  }

  /** The hash of the log's sampled bytes before `offset` (read side by side: on an SSH host, one round trip). */
  private async fingerprint(host: Host, path: string, offset: number): Promise<string> {
    const last = Math.max(0, offset - SAMPLE_BYTES);
    const starts = [...new Set(Array.from({ length: SAMPLES }, (_, i) => Math.floor((last * i) / (SAMPLES - 1))))];
    const parts = await Promise.all(starts.map((start) => host.readFile(path, { start, end: Math.min(offset, start + SAMPLE_BYTES) })));
    const hash = createHash('sha256').update(`${offset}\0`);
    for (const p of parts) hash.update(p);
    return hash.digest('hex');
  }

  private async sameLog(host: Host, path: string, header: Header): Promise<boolean> {
    return (await this.fingerprint(host, path, header.offset)) === header.sampled;
  }

  /** Removes the least recently used files until the folder fits its size (never `keep`, the one just written). */
  private async trim(keep: string): Promise<void> {
    const files = [];
    let total = 0;
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.bin')) continue;
      const file = join(this.dir, name);
      const st = await stat(file);
      total += st.size;
      files.push({ file, size: st.size, used: st.mtimeMs });
    }
    files.sort((a, b) => a.used - b.used);
    for (const f of files) {
      if (total <= this.maxBytes) break;
      if (f.file === keep) continue;
      await unlink(f.file);
      total -= f.size;
    }
  }
}

function headerBytes(h: Header): Buffer {
  return Buffer.from(JSON.stringify(h));
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

function readExactly(fd: number, file: string, pos: number, len: number): Buffer {
  const buf = Buffer.alloc(len);
  let done = 0;
  while (done < len) {
    const n = readSync(fd, buf, done, len - done, pos + done);
    if (n === 0) throw new Error(`${file} ends at byte ${pos + done}, before byte ${pos + len}`);
    done += n;
  }
  return buf;
}

function readHeader(fd: number, file: string): Header {
  const lead = readExactly(fd, file, 0, MAGIC.length + 4);
  const magic = lead.subarray(0, MAGIC.length);
  if (!magic.equals(MAGIC)) {
    if (magic.subarray(0, MAGIC_STEM.length).equals(MAGIC_STEM)) throw new OtherVersion(`a metrics cache file of another version`);
    throw new Error('it does not start as a metrics cache file');
  }
  const json = readExactly(fd, file, lead.length, lead.readUInt32LE(MAGIC.length)).toString('utf8');
  return headerSchema.parse(JSON.parse(json));
}

function readDoubles(fd: number, file: string, pos: number, count: number): number[] {
  const buf = readExactly(fd, file, pos, count * 8);
  return Array.from(new Float64Array(buf.buffer, buf.byteOffset, count));
}

/** Every column's blocks at its position, a batch of blocks per write. */
async function writeBlocks(fh: FileHandle, entries: Array<[string, Float64Column]>, layout: Header['columns']): Promise<void> {
  const batch = new Uint32Array(WRITE_BATCH / 4);
  const perBatch = WRITE_BATCH / BLOCK_BYTES;
  for (let c = 0; c < entries.length; c++) {
    const col = entries[c]![1];
    const at = layout[c]!.at;
    for (let k = 0; k < col.blockCount; k += perBatch) {
      const n = Math.min(perBatch, col.blockCount - k);
      for (let j = 0; j < n; j++) col.copyBlock(k + j, batch.subarray((j * BLOCK_BYTES) / 4, ((j + 1) * BLOCK_BYTES) / 4));
      await fh.write(new Uint8Array(batch.buffer, 0, n * BLOCK_BYTES), 0, n * BLOCK_BYTES, at + k * BLOCK_BYTES);
    }
  }
}
