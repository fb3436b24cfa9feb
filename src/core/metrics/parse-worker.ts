import { parentPort } from 'node:worker_threads';
import { errorMessage } from '../errors/located-error';
import { LocalHost } from '../remote/local-host';
import { MetricsCache, type CacheFillJob } from './metrics-cache';
import { MetricSeries } from './metric-series';
import { BlockSpill } from './block-spill';
import { MetricsFollower } from './metrics-follower';

/*
 * A worker thread that parses a local metrics log into the metrics cache (cache-fill-workers.ts starts it): the thread
 * that asked then takes the parse from the cache file, whose blocks it reads only as charts ask for them. A `cancel`
 * message stops the read at its next chunk, before the cache file is written (so no part-written file is left). Until its
 * last message, `{ read }` ones tell how far it has read (a dashboard shows the share).
 */
const cancelled = new AbortController();
/**
 * Resident column blocks a worker keeps (the rest wait in its spill file until the cache file is written): a third of the
 * default, so each worker costs about 30 MB less (one 211 MB dense log: peak 171 → 140 MB) in the same time.
 */
const WORKER_BLOCK_BUDGET = 16 << 20;
parentPort?.on('message', (msg: { job: CacheFillJob } | { cancel: true }) => {
  if ('cancel' in msg) {
    cancelled.abort();
    return;
  }
  const { job } = msg;
  const problems: string[] = [];
  const spill = new BlockSpill({ budgetBytes: WORKER_BLOCK_BUDGET });
  const cache = new MetricsCache(job.dir, {
    spill,
    maxBytes: job.maxBytes,
    minLogBytes: job.minLogBytes,
    onProblem: (message) => problems.push(message),
  });
  // A poll reads the log to its end and writes the cache file, as the dashboard's own first read would.
  new MetricsFollower(new LocalHost(job.host), job.path, new MetricSeries(spill), cache)
    .poll({
      signal: cancelled.signal,
      onRead: (read) => parentPort?.postMessage({ read }),
    })
    .then(
      () => parentPort?.postMessage({ problems }),
      (err: unknown) => parentPort?.postMessage({ problems, failed: errorMessage(err), cancelled: cancelled.signal.aborted }),
    );
});
