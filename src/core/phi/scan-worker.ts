import { parentPort, workerData } from 'node:worker_threads';
import { readLines } from '../io/line-reader';
import { errorMessage } from '../errors/located-error';
import { LocalHost } from '../remote/local-host';
import { useNameWords, type NameWords } from './name-lexicon';
import { CleanKeys, countFinding, hitsIn, newPhiSummary, type PhiHit } from './scan-dataset';
import { findingLines } from './finding-lines';
import type { RangeJob, RangeResult } from './scan-range';

/*
 * A worker thread of a parallel PHI scan (scan-range.ts): scans the JSONL rows that start in one byte range of a local file
 * and posts back its findings' lines as the scan writes them (findingLines), numbered as the file's lines, and their counts.
 */
const host = new LocalHost();
useNameWords((workerData as { names: NameWords }).names);

/**
 * A range's findings' lines, written as UTF-8 into one buffer as each row is scanned and taken out as strings once the
 * range is done. Kept as strings until then, they outlived the worker's small young generation and cost a sixth of its
 * time in garbage collection (1 GB, two threads); handed over as the buffer's bytes, they piled up in the main thread
 * (which allocates too little to collect often) until the scan's peak memory had grown by 40-55 MB.
 */
class FoundLines {
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  /** The pieces taken out (a piece: the lines between two rows that could not be read). */
  private readonly taken: string[] = [];

  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.used + 3 * text.length > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.used + 3 * text.length));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(text, this.used);
  }

  /** Ends a piece. */
  cut(): void {
    this.taken.push(this.buf.toString('utf8', 0, this.used));
    this.used = 0;
  }

  /** Every piece, the last one ended here; the buffer is then empty for the next range. */
  pieces(): string[] {
    this.cut();
    return this.taken.splice(0);
  }
}

/** One for the worker's life. */
const bytes = new FoundLines();

async function scan(job: RangeJob): Promise<RangeResult> {
  const summary = newPhiSummary();
  const malformed: RangeResult['malformed'] = [];
  const keys = new CleanKeys();
  const hits: PhiHit[] = [];
  let line = job.lineBase;
  for await (const l of readLines(host, job.path, { start: job.start, end: job.end, includePartial: true })) {
    line++;
    if (l.text.trim() === '') continue;
    summary.rows++;
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch (err) {
      bytes.cut();
      malformed.push({ line, offset: l.start, why: errorMessage(err), complete: l.complete });
      continue;
    }
    hitsIn(value, line, keys, hits);
    if (!hits.length) continue;
    for (const h of hits) countFinding(summary, h.category);
    if (job.format) bytes.add(findingLines(hits, job.format));
    hits.length = 0;
  }
  return { id: job.id, rows: summary.rows, counts: summary.counts, text: bytes.pieces(), malformed };
}

parentPort?.on('message', (job: RangeJob) => {
  scan(job).then(
    (result) => parentPort?.postMessage(result),
    (err: unknown) => parentPort?.postMessage({ id: job.id, failed: errorMessage(err) }),
  );
});
