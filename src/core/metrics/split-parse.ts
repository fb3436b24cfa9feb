import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startBundledWorker } from '../io/bundled-worker';
import { lineStartFrom } from '../io/line-start';
import type { Host } from '../remote/host';
import { BLOCK_ROWS } from './block-spill';
import { notLogged } from './float64-column';
import type { MetricLogParser, RangeParserState } from './metric-log-parser';
import type { MetricSeries } from './metric-series';

/** Below this a log parses on one thread in about a second or less: starting workers and merging cost more than they save. */
export const SPLIT_MIN_BYTES = 64 << 20;
/** Each worker gets at least this much of the log. */
const RANGE_MIN_BYTES = 32 << 20;
/**
 * Workers at most, for memory: each costs about 55 MB (its heap, 16 MB of resident blocks, its read buffers). On 16
 * cores a dense 1 GB log took 1.75 s and 605 MB with 8, and 12 were hardly faster.
 */
const MAX_SPLIT_WORKERS = 8;
/** Columns asked of a worker ahead of the one being merged, so that its copying overlaps this thread's. */
const COLUMNS_AHEAD = 4;
/** How much past a split point is read at a time, looking for the next line start. */
const SEEK_BYTES = 64 << 10;

/** One range of a log to parse on a worker (range-parse-worker.ts): `host` is the local host's name. */
export interface RangeJob {
  host: string;
  path: string;
  start: number;
  end: number;
}

/** A worker's first reply: its range's steps (ascending), its columns' names, and its parser's state. */
export type RangeReply =
  { steps: Float64Array<ArrayBuffer>; columns: string[]; state: RangeParserState | undefined; end: number } | { failed: string };

/** A column of a range as its worker hands it over: its rows, in blocks of BLOCK_ROWS (the last one's rest not logged). */
export interface ColumnBlocks {
  rows: number;
  blocks: Uint32Array[];
}

/** How many workers split a log of `size` bytes: one per core, at most MAX_SPLIT_WORKERS, each with RANGE_MIN_BYTES or more. */
export function splitWorkerCount(size: number): number {
  return Math.min(availableParallelism(), MAX_SPLIT_WORKERS, Math.floor(size / RANGE_MIN_BYTES));
}

/**
 * Parses the local log at `path` (its first `size` bytes) on `workers` threads, one byte range of whole lines each, and
 * merges their parses into `parser` (fresh, with an empty series) in the log's order, as one thread reading it all
 * would have: a step logged again in a later range (a resumed run) takes the later values. Returns the offset to read
 * on from, or undefined when the log cannot be parsed by ranges (see MetricLogParser.rangeState): `parser` is then
 * untouched, and the caller reads the log itself.
 *
 * Memory stays bounded: each worker keeps its range's columns within its own budget (the rest in its spill file), and
 * hands them over one column at a time as this thread merges them, range after range.
 */
export async function parseInRanges(
  host: Host,
  path: string,
  size: number,
  parser: MetricLogParser,
  opts: { workers: number; signal?: AbortSignal },
): Promise<number | undefined> {
  const bounds = rangeBounds(path, size, opts.workers);
  const ranges: RangeWorker[] = [];
  const stop = () => {
    for (const r of ranges) r.stop(opts.signal?.reason);
  };
  opts.signal?.addEventListener('abort', stop, { once: true });
  const series = parser.series;
  try {
    for (let i = 0; i + 1 < bounds.length; i++)
      ranges.push(new RangeWorker({ host: host.name, path, start: bounds[i]!, end: bounds[i + 1]! }));
    const states: RangeParserState[] = [];
    let end = 0;
    // Each range is merged once it and those before it are parsed, while later ones may still be parsing.
    for (const range of ranges) {
      const reply = await range.parsed;
      if (!reply.state) {
        series.replaceWith([], [], []);
        return undefined;
      }
      await mergeRange(series, range, reply);
      range.stop();
      states.push(reply.state);
      end = reply.end;
    }
    opts.signal?.throwIfAborted();
    for (const state of states) parser.absorbRange(state);
    return end;
  } catch (err) {
    // Nothing half-merged is left: the caller's next poll reads the log from its start.
    series.replaceWith([], [], []);
    throw err;
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    stop();
  }
}

/** Line starts that split [0, size) of the local file at `path` into `n` ranges of about equal bytes (fewer where lines are longer than a range). */
export function rangeBounds(path: string, size: number, n: number): number[] {
  const bounds = [0];
  const fd = openSync(path, 'r');
  try {
    const probe = Buffer.allocUnsafe(SEEK_BYTES);
    for (let i = 1; i < n; i++) {
      const at = Math.floor((size * i) / n);
      if (at <= bounds[bounds.length - 1]!) continue;
      const start = lineStartFrom(fd, at, size, probe);
      if (start > bounds[bounds.length - 1]! && start < size) bounds.push(start);
    }
  } finally {
    closeSync(fd);
  }
  bounds.push(size);
  return bounds;
}

/** Adds one range's steps and columns to the series of the ranges before it. */
async function mergeRange(series: MetricSeries, range: RangeWorker, reply: Extract<RangeReply, { steps: Float64Array }>): Promise<void> {
  const steps = reply.steps;
  if (steps.length === 0) return;
  const n = series.length;
  // Usually each range's steps come after the last range's, and its columns are copied a block at a time. A resumed
  // run's repeated (or earlier) steps go row by row, so that the later value wins and other steps stay in order.
  const append = n === 0 || steps[0]! > series.steps[n - 1]!;
  const base = append ? series.appendSteps(steps) : 0;
  const rows = append ? undefined : Array.from(steps, (step) => series.rowOf(step));
  const ahead: Array<Promise<ColumnBlocks>> = [];
  for (let c = 0, asked = 0; c < reply.columns.length; c++) {
    while (asked < reply.columns.length && ahead.length <= COLUMNS_AHEAD) {
      const blocks = range.column(asked++);
      blocks.catch(() => undefined); // handled here when its turn comes (a failed worker fails them all)
      ahead.push(blocks);
    }
    const { rows: count, blocks } = await ahead.shift()!;
    const col = series.columnRef(reply.columns[c]!);
    for (let k = 0; k * BLOCK_ROWS < count; k++) {
      const from = k * BLOCK_ROWS;
      const n = Math.min(BLOCK_ROWS, count - from);
      const words = blocks[k]!;
      if (!rows) {
        col.appendWords(base + from, words, n);
        continue;
      }
      const values = new Float64Array(words.buffer, words.byteOffset, n);
      for (let i = 0; i < n; i++) if (!notLogged(words, i * 2)) col.set(rows[from + i]!, values[i]!);
    }
  }
}

/** A worker parsing one range: `parsed` is its first reply; then `column(i)` fetches column i's blocks. */
class RangeWorker {
  readonly parsed: Promise<Extract<RangeReply, { steps: Float64Array }>>;
  private readonly worker: Worker;
  private readonly waiting: Array<{ resolve: (c: ColumnBlocks) => void; reject: (e: unknown) => void }> = [];
  private failure: unknown;
  private stopped = false;
  private readonly rejectParsed: (e: unknown) => void;

  constructor(job: RangeJob) {
    this.worker = startBundledWorker(join(__dirname, 'range-parse-worker.js'), join(__dirname, 'range-parse-worker.ts'), {});
    let settle!: { resolve: (r: Extract<RangeReply, { steps: Float64Array }>) => void; reject: (e: unknown) => void };
    this.parsed = new Promise((resolve, reject) => (settle = { resolve, reject }));
    this.rejectParsed = settle.reject;
    // Handled until parseInRanges awaits it (ranges are awaited in order; a later one may fail first).
    this.parsed.catch(() => undefined);
    let first = true;
    this.worker.on('message', (msg: RangeReply | ColumnBlocks) => {
      if (!first) this.waiting.shift()?.resolve(msg as ColumnBlocks);
      else if ('failed' in msg) this.fail(new Error(msg.failed));
      else settle.resolve(msg as Extract<RangeReply, { steps: Float64Array }>);
      first = false;
    });
    this.worker.once('error', (err) => this.fail(err));
    this.worker.once('exit', (code) => {
      if (!this.stopped)
        this.fail(new Error(`the parse worker for bytes ${job.start}-${job.end} of ${job.path} stopped (exit code ${code})`));
    });
    this.worker.postMessage({ range: job });
  }

  column(i: number): Promise<ColumnBlocks> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.worker.postMessage({ column: i });
    });
  }

  /** Ends the worker; what still waits on it (its reply, columns asked for) fails with `reason`. */
  stop(reason: unknown = new Error('the parse worker was stopped')): void {
    if (this.stopped) return;
    this.stopped = true;
    this.fail(reason);
    void this.worker.terminate();
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    this.rejectParsed(err);
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}
