import { parentPort, workerData } from 'node:worker_threads';
import { readLines } from '../io/line-reader';
import { errorMessage } from '../errors/located-error';
import { LocalHost } from '../remote/local-host';
import { useNameWords, type NameWords } from './name-lexicon';
import { CleanKeys, hitsIn } from './scan-dataset';
import type { RangeJob, RangeResult } from './scan-range';

/*
 * A worker thread of a parallel PHI scan (scan-range.ts): scans the JSONL rows that start in one byte range of a local file
 * and posts back what it found, with lines counted from the range's first line.
 */
const host = new LocalHost();
useNameWords((workerData as { names: NameWords }).names);

async function scan(job: RangeJob): Promise<RangeResult> {
  const out: RangeResult = { id: job.id, lines: 0, rows: 0, hits: [], malformed: [] };
  const keys = new CleanKeys();
  for await (const l of readLines(host, job.path, { start: job.start, end: job.end, includePartial: true })) {
    const line = ++out.lines;
    if (l.text.trim() === '') continue;
    out.rows++;
    let value: unknown;
    try {
      value = JSON.parse(l.text);
    } catch (err) {
      out.malformed.push({ line, offset: l.start, why: errorMessage(err), complete: l.complete });
      continue;
    }
    hitsIn(value, line, keys, out.hits);
  }
  return out;
}

parentPort?.on('message', (job: RangeJob) => {
  scan(job).then(
    (result) => parentPort?.postMessage(result),
    (err: unknown) => parentPort?.postMessage({ id: job.id, failed: errorMessage(err) }),
  );
});
