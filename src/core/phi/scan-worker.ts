import { parentPort, workerData } from 'node:worker_threads';
import { readLines } from '../io/line-reader';
import { parseJsonLine } from '../io/json-line';
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
 * A range's findings' lines, written as UTF-8 into one buffer as each row is scanned and handed over whole (transferred,
 * not copied) once the range is done; the main thread writes the bytes out and hands the buffer back with a later range.
 * So neither thread makes garbage of the lines: as strings they outlived the worker's small young generation (a sixth of
 * its time went to garbage collection) or, one per range, went straight to the main thread's old generation; buffers
 * handed over and never back piled up in the main thread, which allocates too little to collect often (+40-55 MB).
 */
class FoundLines {
  private buf: Buffer;
  private used = 0;
  /** Where each piece ends in `buf`, a piece being the lines between two rows that could not be read. */
  private ends: number[] = [];
  /** Buffers handed back by the main thread. */
  private readonly spares: ArrayBuffer[] = [];

  constructor() {
    this.buf = this.fresh(1 << 20);
  }

  add(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.used + 3 * text.length > this.buf.length) {
      const bigger = this.fresh(Math.max(2 * this.buf.length, this.used + 3 * text.length));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(text, this.used);
  }

  /** Ends a piece. */
  cut(): void {
    this.ends.push(this.used);
  }

  /** A buffer for reuse. */
  spare(buffer: ArrayBuffer): void {
    this.spares.push(buffer);
  }

  /** The range's bytes and where its pieces end, the last one ended here; a spare (or a new buffer) takes their place. */
  take(): { bytes: ArrayBuffer; ends: number[] } {
    this.cut();
    const taken = { bytes: this.buf.buffer as ArrayBuffer, ends: this.ends };
    this.buf = this.fresh(this.buf.length);
    this.used = 0;
    this.ends = [];
    return taken;
  }

  /** A spare of `size` bytes or more (smaller ones are dropped), or a new buffer of its own (a pooled one cannot be handed over). */
  private fresh(size: number): Buffer {
    let spare: ArrayBuffer | undefined;
    while ((spare = this.spares.pop()) && spare.byteLength < size);
    return Buffer.from(spare ?? new ArrayBuffer(size));
  }
}

/** One for the worker's life, as are the buffers its ranges are read into. */
const bytes = new FoundLines();
const chunks: Buffer[] = [];

async function scan(job: RangeJob): Promise<RangeResult> {
  const summary = newPhiSummary();
  const malformed: RangeResult['malformed'] = [];
  const keys = new CleanKeys();
  const hits: PhiHit[] = [];
  let line = job.lineBase;
  for await (const l of readLines(host, job.path, { start: job.start, end: job.end, includePartial: true, buffers: chunks })) {
    line++;
    if (l.text.trim() === '') continue;
    summary.rows++;
    const parsed = parseJsonLine(l.text);
    if (parsed.error !== undefined) {
      bytes.cut();
      malformed.push({ line, offset: l.start, why: parsed.error, complete: l.complete });
      continue;
    }
    hitsIn(parsed.value, line, keys, hits);
    if (!hits.length) continue;
    for (const h of hits) countFinding(summary, h.category);
    if (job.format) bytes.add(findingLines(hits, job.format));
    hits.length = 0;
  }
  return { id: job.id, rows: summary.rows, counts: summary.counts, ...bytes.take(), malformed };
}

parentPort?.on('message', (job: RangeJob) => {
  if (job.spare) bytes.spare(job.spare);
  scan(job).then(
    (result) => parentPort?.postMessage(result, [result.bytes]),
    (err: unknown) => parentPort?.postMessage({ id: job.id, failed: errorMessage(err) }),
  );
});
