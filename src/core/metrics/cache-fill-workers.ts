import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startBundledWorker } from '../io/bundled-worker';
import type { CacheFiller, CacheFillJob } from './metrics-cache';

/**
 * Parses big local logs into the metrics cache on worker threads (parse-worker.ts), a few at a time: ten 211 MB logs
 * compared at once are about 12 s of parsing, which on the extension host's one thread also held up every message of
 * the dashboard. Each log gets a fresh worker, ended when its file is written, so nothing stays in memory between logs
 * (a worker holds one log's columns, within its own 16 MB budget of resident blocks, and its heap).
 */
export class CacheFillWorkers implements CacheFiller {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /**
   * `limit`: workers at once; by default one per core but one, at least 2 and at most 12, each costing about 60 MB while
   * it parses. Ten 211 MB logs on 16 cores (bench/metrics-open.bench.ts): 4 at once 3.1 s, 8 2.7 s, 10 1.9 s.
   */
  constructor(private readonly limit = Math.max(2, Math.min(12, availableParallelism() - 1))) {}

  /**
   * Parses `job` on a worker; resolves with the problems its cache reported. Once `signal` aborts, a job still waiting
   * never starts and a running one stops at its next chunk: both reject with the signal's reason.
   */
  async fill(job: CacheFillJob, signal?: AbortSignal, onRead?: (read: number) => void): Promise<string[]> {
    signal?.throwIfAborted();
    // A job that ends hands its place to the next one waiting, so no new job can take it in between.
    if (this.running < this.limit) this.running++;
    else await this.wait(signal);
    try {
      return await parseOnWorker(job, signal, onRead);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Waits for a running job to hand over its place; leaves the queue (and rejects) if `signal` aborts first. */
  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const handOver = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(handOver), 1);
        reject(signal!.reason);
      };
      this.waiting.push(handOver);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}

/** The worker's last message; before it, `{ read }` messages tell how far it has read. */
interface WorkerReply {
  problems: string[];
  failed?: string;
  /** The worker stopped because it was asked to (a `cancel` message). */
  cancelled?: boolean;
}

function parseOnWorker(
  job: CacheFillJob,
  signal: AbortSignal | undefined,
  onRead: ((read: number) => void) | undefined,
): Promise<string[]> {
  const worker = startBundledWorker(join(__dirname, 'metrics-worker.js'), join(__dirname, 'parse-worker.ts'), {});
  // Asked to stop rather than terminated: a worker ended while writing the cache file would leave it part-written.
  const cancel = () => worker.postMessage({ cancel: true });
  signal?.addEventListener('abort', cancel, { once: true });
  return new Promise<string[]>((resolve, reject) => {
    worker.on('message', (r: WorkerReply | { read: number }) => {
      if ('read' in r) onRead?.(r.read);
      else if (r.cancelled) reject(signal?.reason ?? new Error(r.failed));
      else if (r.failed !== undefined) reject(new Error(r.failed));
      else resolve(r.problems);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the parse worker stopped (exit code ${code})`)));
    worker.postMessage({ job });
  }).finally(() => {
    signal?.removeEventListener('abort', cancel);
    void worker.terminate();
  });
}
