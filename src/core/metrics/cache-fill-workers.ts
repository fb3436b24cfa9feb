import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startBundledWorker } from '../io/bundled-worker';
import type { CacheFiller, CacheFillJob } from './metrics-cache';

/**
 * Parses big local logs into the metrics cache on worker threads (parse-worker.ts), a few at a time: ten 211 MB logs
 * compared at once are about 12 s of parsing, which on the extension host's one thread also held up every message of
 * the dashboard. Each log gets a fresh worker, ended when its file is written, so nothing stays in memory between logs
 * (a worker holds one log's columns, within its own 48 MB budget of resident blocks, and about 60 MB of heap).
 */
export class CacheFillWorkers implements CacheFiller {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /** `limit`: workers at once; by default one per core but one, at least 2 and at most 4 (each costs about 100 MB). */
  constructor(private readonly limit = Math.min(4, Math.max(2, availableParallelism() - 1))) {}

  async fill(job: CacheFillJob): Promise<string[]> {
    // A job that ends hands its place to the next one waiting, so no new job can take it in between.
    if (this.running < this.limit) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await parseOnWorker(job);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

function parseOnWorker(job: CacheFillJob): Promise<string[]> {
  const worker = startBundledWorker(join(__dirname, 'metrics-worker.js'), join(__dirname, 'parse-worker.ts'), {});
  return new Promise<string[]>((resolve, reject) => {
    worker.once('message', (r: { problems: string[]; failed?: string }) => {
      if (r.failed !== undefined) reject(new Error(r.failed));
      else resolve(r.problems);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the parse worker stopped (exit code ${code})`)));
    worker.postMessage(job);
  }).finally(() => void worker.terminate());
}
