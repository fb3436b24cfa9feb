import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startBundledWorker } from '../io/bundled-worker';
import { jobsInOrder, type WorkerJob } from '../io/jobs-in-order';
import { lineStartFrom, newlinesIn } from '../io/line-start';
import { malformedLine } from '../datasets/jsonl-reader';
import { nameWords } from './name-lexicon';
import type { DatasetReader } from '../datasets/dataset-reader';
import type { Host } from '../remote/host';
import { countFinding, hideQuotedText, scanDataset, type PhiSummary, type ScanOptions } from './scan-dataset';
import { findingLines, type FindingFormat } from './finding-lines';
import type { PhiCategory, PhiCounts } from './phi-categories';

/*
 * A PHI scan of a local JSONL file over worker threads: the file is cut into ranges of whole lines, each scanned by a
 * worker (scan-worker.ts) that writes its findings' lines itself; they come back in file order, as one thread writes them.
 */

/** What a worker scans: the rows that start in [start, end) of a file (start is a line start), how it writes findings. */
export interface RangeJob {
  id: number;
  path: string;
  start: number;
  end: number;
  /** The lines before `start`: the range's first line is line lineBase + 1. */
  lineBase: number;
  /** How its findings are written; none: only counted. */
  format?: FindingFormat;
  /** A buffer a range's lines came in, written out: the worker's to reuse (transferred). */
  spare?: ArrayBuffer;
}

/** What a worker found in a range, with the file's line numbers. */
export interface RangeResult {
  id: number;
  rows: number;
  counts: PhiCounts;
  /**
   * The findings' lines (findingLines) as UTF-8, in `bytes[0, ends[last])` (transferred), cut where a row could not be
   * read: the piece that ends at ends[i] comes before malformed[i], and the last after every one of them, so each is
   * reported where a reader in one thread would.
   */
  bytes: ArrayBuffer;
  ends: number[];
  malformed: { line: number; offset: number; why: string; complete: boolean }[];
}

/** Bytes per range: large enough that a worker spends its time scanning, small enough to keep few findings waiting. */
const RANGE_BYTES = 4 << 20;
/** Below this a file is scanned in-process: starting workers (each builds the name lexicon) costs more than it saves. */
const PARALLEL_MIN_BYTES = 4 * RANGE_BYTES;
/**
 * Workers at most: past this the main thread limited a scan (measured while it still received the findings as objects and
 * wrote them; it now counts each range's lines and passes the workers' bytes on).
 */
const MAX_WORKERS = 12;
/**
 * Worker threads by default (fewer on a machine with fewer cores). Each costs about 27 MB beside the 110 MB of the main
 * thread, which then only cuts ranges and writes the findings out (/usr/bin/time, 1 GB: 161-167 MB with two on the dev
 * and the lent machine, 193 MB with three, 220 MB with four, 323-327 MB with eight): two keep a scan within 200 MB at
 * about twice the speed of one thread (104-106 MB/s on the dev machine), and more trade memory for speed when asked for.
 */
const DEFAULT_WORKERS = 2;
/** Worker threads a scan asked for `threads` starts: one per core for 'auto', never more than MAX_WORKERS; 1: none. */
export function phiWorkerCount(threads: number | 'auto' = Math.min(DEFAULT_WORKERS, availableParallelism())): number {
  return Math.min(threads === 'auto' ? availableParallelism() : threads, MAX_WORKERS);
}

/** A worker from its bundle beside this one (dist/phi-worker.js), or from its source through tsx (tests, benchmarks). */
function startWorker(): Worker {
  // The name lexicon's words are read once here; each worker builds its lookup from them instead of loading compromise.
  const workerData = { names: nameWords() };
  // A small young generation keeps each worker's memory down (peak RSS of a 0.1 GB scan on 2 cores: 297 → 266 MB). A
  // limit on the old generation would save more, but a worker past it aborts the whole process (a long line, dense findings).
  const resourceLimits = { maxYoungGenerationSizeMb: 8 };
  return startBundledWorker(join(__dirname, 'phi-worker.js'), join(__dirname, 'scan-worker.ts'), { workerData, resourceLimits });
}

export interface FindingScanOptions extends ScanOptions {
  /** How findings are written; none: a scan only counts them (into the summary). */
  format?: FindingFormat;
}

/**
 * The PHI findings of a dataset, written in `opts.format` in file order, a batch at a time, counted into `summary`: with
 * `workers` of 2 or more a local JSONL file large enough is scanned over that many threads, which write their findings
 * themselves, as UTF-8; anything else (JSON, CSV, parquet, a file on an SSH host) in-process, as strings. Bytes yielded
 * are the scan's again once the next batch is asked for: write them out (or copy them) before.
 */
export async function* scanForPhi(
  host: Host,
  reader: DatasetReader,
  summary: PhiSummary,
  opts: FindingScanOptions = {},
  workers = 1,
): AsyncGenerator<string | Uint8Array> {
  if (host.kind === 'local' && reader.format === 'jsonl' && reader.size >= PARALLEL_MIN_BYTES && workers >= 2)
    yield* scanInWorkers(reader.path, reader.size, workers, summary, opts);
  else for await (const hits of scanDataset(reader, summary, opts)) if (opts.format) yield findingLines(hits, opts.format);
}

async function* scanInWorkers(
  path: string,
  size: number,
  count: number,
  summary: PhiSummary,
  opts: FindingScanOptions,
): AsyncGenerator<Uint8Array> {
  const fd = openSync(path, 'r');
  const probe = Buffer.allocUnsafe(1 << 16);
  const counting = Buffer.allocUnsafe(1 << 20);
  let nextStart = 0;
  let lineBase = 0;
  /** Buffers whose bytes have been written out, handed back to the workers with the next ranges. */
  const spares: ArrayBuffer[] = [];
  const nextJob = (id: number): WorkerJob | undefined => {
    if (nextStart >= size) return undefined;
    const start = nextStart;
    nextStart = start + RANGE_BYTES >= size ? size : lineStartFrom(fd, start + RANGE_BYTES, size, probe);
    const spare = spares.pop();
    const job: RangeJob = { id, path, start, end: nextStart, lineBase, format: opts.format, spare };
    // The lines of every range go before the next is sent: its worker numbers its findings' lines as the file does.
    if (nextStart < size) lineBase += newlinesIn(fd, start, nextStart, counting);
    return { message: job, transfer: spare && [spare] };
  };
  try {
    // At most two finished ranges per worker wait their turn, so memory stays bounded.
    for await (const r of jobsInOrder<RangeResult | { id: number; failed: string }>(Array.from({ length: count }, startWorker), nextJob, {
      ahead: 2 * count,
      what: 'a PHI scan worker thread',
      signal: opts.signal,
    })) {
      if ('failed' in r) throw new Error(r.failed);
      summary.rows += r.rows;
      for (const [category, n] of Object.entries(r.counts) as [PhiCategory, number][]) countFinding(summary, category, n);
      for (const [i, end] of r.ends.entries()) {
        const from = i ? r.ends[i - 1]! : 0;
        if (end > from) yield new Uint8Array(r.bytes, from, end - from);
        const m = r.malformed[i];
        if (m) {
          summary.unreadable++;
          opts.onUnreadable?.(hideQuotedText(malformedLine(m.line, m.offset, m.why, m.complete)));
        }
      }
      // Its bytes are written out (the caller asked for what follows them): the buffer goes back with a next range.
      spares.push(r.bytes);
    }
  } finally {
    closeSync(fd);
  }
}
