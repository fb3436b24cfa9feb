import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread from its bundle (`bundle`: dist/NAME.js beside the extension's or the CLI's bundle), or, where there
 * is none (tests and benchmarks run the sources), from its TypeScript source through tsx.
 */
export function startBundledWorker(bundle: string, source: string, opts: WorkerOptions): Worker {
  if (existsSync(bundle)) return new Worker(bundle, opts);
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { ...opts, eval: true });
}
