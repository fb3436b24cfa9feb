// Ten runs compared for the first time, as the dashboard opens them, as its own process for bench/metrics-open.bench.ts:
// each log is parsed into a fresh metrics cache on worker threads (`--workers N` at once; CacheFillWorkers, the
// dashboard's), then taken from the cache file. Prints one JSON line: the wall time until every run's series is loaded,
// the steps of each, and the process's peak RSS (all threads) sampled every 10 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../src/core/remote/local-host';
import { MetricsFollower } from '../src/core/metrics/metrics-follower';
import { MetricsCache } from '../src/core/metrics/metrics-cache';
import { CacheFillWorkers } from '../src/core/metrics/cache-fill-workers';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--workers');
  const workers = at > 0 ? Number(process.argv[at + 1]) : undefined;
  const logs = process.argv.slice(2).filter((a, i, all) => a !== '--workers' && all[i - 1] !== '--workers');
  const dir = mkdtempSync(join(tmpdir(), 'medrl-open-bench-'));
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  try {
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { filler: new CacheFillWorkers(workers), onProblem: (m) => problems.push(m) });
    const t = performance.now();
    const followers = logs.map((log) => new MetricsFollower(new LocalHost(), log, undefined, cache));
    await Promise.all(followers.map((f) => f.poll()));
    const ms = performance.now() - t;
    if (problems.length) throw new Error(problems.join('\n'));
    peak = Math.max(peak, process.memoryUsage().rss);
    console.log(JSON.stringify({ ms, steps: followers.map((f) => f.series.length), peakMb: peak / 1e6 }));
  } finally {
    clearInterval(sampler);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
