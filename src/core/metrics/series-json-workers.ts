import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startBundledWorker } from '../io/bundled-worker';
import { jobsInOrder, type WorkerJob } from '../io/jobs-in-order';
import type { MetricSeries } from './metric-series';
import { jsonColumnOrder, RowTiles, seriesJsonChunks, tileRowsFor } from './series-json';

/*
 * `medrl metrics --json` over worker threads for a large series: this thread copies tiles of rows out of the columns
 * (series-json.ts) and writes the output in order; the workers (series-json-worker.ts) turn the tiles into JSON lines,
 * the costly part (about 60% of --json's time on a dense 1 GB log on one thread).
 */

/** Rows for a worker to write, as copies it may keep: each column's words for the rows, column after column. */
export interface JsonJob {
  id: number;
  rows: number;
  steps: Float64Array;
  words: Uint32Array;
}

export interface JsonJobDone {
  id: number;
  bytes: Uint8Array;
}

/** Values below which one thread writes the series: starting workers (about 30 ms each) would cost more than it saves. */
const PARALLEL_MIN_VALUES = 4_000_000;
/**
 * Workers at most, for memory: each costs about 15 MB with its jobs (a dense 1 GB log on 16 cores: 8 workers wrote in
 * 1.48 s at 331 MB peak, 12 in 1.17 s, 16 no faster).
 */
const MAX_WORKERS = 8;
/** Bytes of values per job: a job's output (about 5x that) stays small while a message's cost vanishes beside its work. */
const JOB_BYTES = 256 << 10;
/** Bytes of rows copied out of the columns at a time, each tile cut into jobs. */
const TILE_BYTES = 8 << 20;

/** Worker threads for writing `series` as JSON: one per core (at most 8), none (1) where it is small or there is one core. */
export function jsonWorkerCount(series: MetricSeries): number {
  const values = series.length * series.columnEntries().length;
  return values < PARALLEL_MIN_VALUES ? 1 : Math.min(availableParallelism(), MAX_WORKERS);
}

/**
 * The series' JSON lines (what seriesJsonChunks writes, byte for byte) in order, written by `workers` threads; with
 * fewer than 2, on this one. At most `workers + 2` jobs are out or waiting their turn, so memory stays bounded (about
 * 1.5 MB each for 64 metrics).
 */
export async function* seriesJsonOutput(
  series: MetricSeries,
  workers = jsonWorkerCount(series),
  jobBytes = JOB_BYTES,
): AsyncGenerator<Uint8Array> {
  if (workers < 2 || series.length === 0) {
    yield* seriesJsonChunks(series);
    return;
  }
  const order = jsonColumnOrder(series);
  const keys = order.map(([k]) => k);
  const jobRows = tileRowsFor(order.length, jobBytes);
  const tiles = new RowTiles(
    order.map(([, c]) => c),
    series.steps,
    Math.max(jobRows, tileRowsFor(order.length, TILE_BYTES)),
  );
  const total = series.length;
  const jobs = Math.ceil(total / jobRows);
  const pool = Array.from({ length: workers }, () =>
    startBundledWorker(join(__dirname, 'json-worker.js'), join(__dirname, 'series-json-worker.ts'), { workerData: { keys } }),
  );
  const nextJob = (id: number): WorkerJob | undefined => {
    if (id >= jobs) return undefined;
    const from = id * jobRows;
    const rows = Math.min(jobRows, total - from);
    const tile = tiles.load(from);
    const words = new Uint32Array(rows * 2 * order.length);
    for (let c = 0, at = (from - tile.start) * 2; c < order.length; c++, at += tile.stride * 2)
      words.set(tile.words.subarray(at, at + rows * 2), c * rows * 2);
    const steps = Float64Array.from(series.steps.slice(from, from + rows));
    return { message: { id, rows, steps, words } satisfies JsonJob, transfer: [steps.buffer, words.buffer] };
  };
  for await (const done of jobsInOrder<JsonJobDone>(pool, nextJob, { ahead: workers + 2, what: 'a JSON worker thread' })) yield done.bytes;
}
