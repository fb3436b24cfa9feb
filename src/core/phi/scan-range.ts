import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startBundledWorker } from '../io/bundled-worker';
import { jobsInOrder, type WorkerJob } from '../io/jobs-in-order';
import { lineStartFrom } from '../io/line-start';
import { malformedLine } from '../datasets/jsonl-reader';
import { nameWords } from './name-lexicon';
import type { DatasetReader } from '../datasets/dataset-reader';
import type { Host } from '../remote/host';
import { countFinding, hideQuotedText, scanDataset, type PhiHit, type PhiSummary, type ScanOptions } from './scan-dataset';

/*
 * A PHI scan of a local JSONL file over worker threads: the file is cut into ranges of whole lines, each scanned by a
 * worker (scan-worker.ts), and the findings come back in file order, as scanDataset yields them.
 */

/** What a worker scans: the rows that start in [start, end) of a file (start is a line start). */
export interface RangeJob {
  id: number;
  path: string;
  start: number;
  end: number;
}

/** What a worker found in a range; lines are counted from the range's first line (1). */
export interface RangeResult {
  id: number;
  lines: number;
  rows: number;
  hits: PhiHit[];
  malformed: { line: number; offset: number; why: string; complete: boolean }[];
}

/** Bytes per range: large enough that a worker spends its time scanning, small enough to keep few findings waiting. */
const RANGE_BYTES = 4 << 20;
/** Below this a file is scanned in-process: starting workers (each builds the name lexicon) costs more than it saves. */
const PARALLEL_MIN_BYTES = 4 * RANGE_BYTES;
/** Workers at most: past this, reading and writing the findings in the main thread is what limits a scan. */
const MAX_WORKERS = 12;
/**
 * Worker threads a scan asked for `threads` starts: one per core for 'auto', never more than MAX_WORKERS; none (1) by
 * default. Each worker costs about 55 MB beside the main thread's 120 MB (/usr/bin/time, a 1 GB file on 16 cores: 8
 * workers 562-571 MB): a default scan stays within 200 MB, and more threads trade memory for speed only when the user
 * asks.
 */
export function phiWorkerCount(threads: number | 'auto' = 1): number {
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

/**
 * The PHI findings of a dataset, in file order and in batches (as scanDataset yields them), counted into `summary`: with
 * `workers` of 2 or more a local JSONL file large enough is scanned over that many threads; anything else (JSON, CSV,
 * parquet, a file on an SSH host) in-process.
 */
export function scanForPhi(
  host: Host,
  reader: DatasetReader,
  summary: PhiSummary,
  opts: ScanOptions = {},
  workers = 1,
): AsyncGenerator<PhiHit[]> {
  if (host.kind !== 'local' || reader.format !== 'jsonl' || reader.size < PARALLEL_MIN_BYTES || workers < 2)
    return scanDataset(reader, summary, opts);
  return scanInWorkers(reader.path, reader.size, workers, summary, opts);
}

async function* scanInWorkers(path: string, size: number, count: number, summary: PhiSummary, opts: ScanOptions): AsyncGenerator<PhiHit[]> {
  const fd = openSync(path, 'r');
  const probe = Buffer.allocUnsafe(1 << 16);
  let nextStart = 0;
  const nextJob = (id: number): WorkerJob | undefined => {
    if (nextStart >= size) return undefined;
    const start = nextStart;
    nextStart = start + RANGE_BYTES >= size ? size : lineStartFrom(fd, start + RANGE_BYTES, size, probe);
    return { message: { id, path, start, end: nextStart } satisfies RangeJob };
  };
  try {
    let lineBase = 0;
    // At most two finished ranges per worker wait their turn, so memory stays bounded.
    for await (const r of jobsInOrder<RangeResult | { id: number; failed: string }>(Array.from({ length: count }, startWorker), nextJob, {
      ahead: 2 * count,
      what: 'a PHI scan worker thread',
      signal: opts.signal,
    })) {
      if ('failed' in r) throw new Error(r.failed);
      summary.rows += r.rows;
      // A range's findings as one batch, cut where a row could not be read: that is reported where a reader in one thread
      // would, after the findings of earlier lines and before those of later ones.
      let m = 0;
      let batch: PhiHit[] = [];
      for (const h of r.hits) {
        if (m < r.malformed.length && r.malformed[m]!.line < h.line) {
          if (batch.length) yield batch;
          batch = [];
          for (; m < r.malformed.length && r.malformed[m]!.line < h.line; m++) unreadable(r.malformed[m]!, lineBase, summary, opts);
        }
        countFinding(summary, h.category);
        h.line += lineBase;
        batch.push(h);
      }
      if (batch.length) yield batch;
      for (; m < r.malformed.length; m++) unreadable(r.malformed[m]!, lineBase, summary, opts);
      lineBase += r.lines;
    }
  } finally {
    closeSync(fd);
  }
}

function unreadable(m: RangeResult['malformed'][number], lineBase: number, summary: PhiSummary, opts: ScanOptions): void {
  summary.unreadable++;
  opts.onUnreadable?.(hideQuotedText(malformedLine(lineBase + m.line, m.offset, m.why, m.complete)));
}
