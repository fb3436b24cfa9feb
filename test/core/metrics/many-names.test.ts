import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricLogParser } from '../../../src/core/metrics/metric-log-parser';

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

describe('metric logs with many names or huge lines', () => {
  it('keeps 30,000 metric names logged at 3 steps in a few MB, not a 64 KB block each', () => {
    global.gc?.();
    const before = process.memoryUsage().arrayBuffers;
    const p = new MetricLogParser();
    for (let step = 1; step <= 3; step++) {
      const parts = Array.from({ length: 30_000 }, (_, i) => `val-aux/source_${i}/reward/mean@4:${(i + step) / 1000}`);
      const b = Buffer.from(`step:${step} - ${parts.join(' - ')}`);
      p.feedBytes({ buf: b, from: 0, to: b.length, start: 0 });
    }
    const grew = process.memoryUsage().arrayBuffers - before;
    assert.equal(p.series.metricNames().length, 30_000);
    assert.equal(p.series.row(2).metrics['val-aux/source_29999/reward/mean@4'], 30.002);
    // 30,000 × 3 values are 0.7 MB; a 64 KB block per name was 1,966 MB.
    assert.ok(grew < 30e6, `column blocks grew ${mb(grew)}`);
  });

  it('parses a TRL dict line holding a 64 MB string within a 256 MB heap (a string built a character at a time took 40x)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-huge-line-'));
    const log = join(dir, 'trl.log');
    writeFileSync(log, `{'loss': 0.5, 'completions': '${'x'.repeat(64 << 20)}', 'reward': 0.25, 'epoch': 0.1}\n`);
    const script = `
      const { LocalHost } = require(${JSON.stringify(join(__dirname, '../../../src/core/remote/local-host'))});
      const { MetricsFollower } = require(${JSON.stringify(join(__dirname, '../../../src/core/metrics/metrics-follower'))});
      const f = new MetricsFollower(new LocalHost(), ${JSON.stringify(log)});
      f.poll({ final: true }).then(() => console.log(JSON.stringify(f.series.row(0).metrics)));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--max-old-space-size=256', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr.slice(-2000));
    assert.deepEqual(JSON.parse(r.stdout), { loss: 0.5, reward: 0.25, epoch: 0.1 });
  });
});
