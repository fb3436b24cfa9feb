import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { writeVerlLog } from './verl-log-generator';

describe('a 1 GB verl log', () => {
  it('is parsed whole with bounded memory (heap and RSS growth under 100 MB) in under a minute', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-1g-'));
    try {
      const file = join(dir, 'output.log');
      const steps = await writeVerlLog(file, 1 << 30);
      assert.ok(statSync(file).size >= 1 << 30);
      global.gc?.();
      const { rss: rss0, heapUsed: heap0 } = process.memoryUsage();
      let peak = rss0;
      let heapPeak = heap0;
      const sampler = setInterval(() => {
        const m = process.memoryUsage();
        peak = Math.max(peak, m.rss);
        heapPeak = Math.max(heapPeak, m.heapUsed);
      }, 10);
      const started = Date.now();
      const f = new MetricsFollower(new LocalHost(), file);
      const r = await f.poll();
      const ms = Date.now() - started;
      clearInterval(sampler);
      const end = process.memoryUsage();
      peak = Math.max(peak, end.rss);
      heapPeak = Math.max(heapPeak, end.heapUsed);
      const growthMb = (heapPeak - heap0) / 1e6;
      console.log(
        `[1 GB] ${steps} steps in ${ms} ms (${((1 << 30) / 1e6 / (ms / 1000)).toFixed(0)} MB/s), peak heap growth ${growthMb.toFixed(1)} MB, peak RSS growth ${((peak - rss0) / 1e6).toFixed(1)} MB`,
      );
      assert.equal(r.steps, steps);
      assert.equal(f.series.length, steps);
      assert.equal(f.series.metricNames().length, 46);
      assert.equal(f.series.row(steps - 1).metrics['training/global_step'], steps);
      assert.deepEqual(f.parser.problems, []);
      assert.ok(growthMb < 100, `the heap grew ${growthMb.toFixed(1)} MB`);
      assert.ok(peak - rss0 < 100e6, `RSS grew ${((peak - rss0) / 1e6).toFixed(1)} MB`);
      assert.ok(ms < 60_000, `took ${ms} ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
