import { parentPort, workerData } from 'node:worker_threads';
import { JsonLineFormat } from './series-json';
import type { JsonJob, JsonJobDone } from './series-json-workers';

/*
 * A worker thread of `medrl metrics --json` on a large series (series-json-workers.ts): writes the JSON lines of the
 * tiles of rows it is sent, each into one buffer handed back without a copy.
 */
const format = new JsonLineFormat((workerData as { keys: string[] }).keys);

parentPort?.on('message', (job: JsonJob) => {
  const values = new Float64Array(job.words.buffer, job.words.byteOffset, job.words.length / 2);
  const tile = { start: 0, rows: job.rows, stride: job.rows, values, words: job.words, steps: job.steps };
  // Its own ArrayBuffer (not the shared pool's), so that it can be transferred.
  const buf = Buffer.allocUnsafeSlow(job.rows * format.longestRow);
  const end = format.write(buf, 0, tile, 0, job.rows);
  parentPort?.postMessage({ id: job.id, bytes: buf.subarray(0, end) } satisfies JsonJobDone, [buf.buffer]);
});
