import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricSeries } from '../../../src/core/metrics/metric-series';
import { jsonMetrics } from '../../../src/core/metrics/metric-value';
import { seriesJsonChunks } from '../../../src/core/metrics/series-json';
import { writeDenseVerlLog } from './verl-log-generator';

const FIX = join(__dirname, '../../fixtures/metrics');

/** What `medrl metrics --json` printed before it wrote column-wise: one JSON.stringify per step. */
function perRecord(series: MetricSeries): string {
  let out = '';
  for (const rec of series.records()) out += `${JSON.stringify({ step: rec.step, metrics: jsonMetrics(rec.metrics) })}\n`;
  return out;
}

const chunked = (series: MetricSeries) => Buffer.concat([...seriesJsonChunks(series)]).toString('utf8');

async function parsed(path: string): Promise<MetricSeries> {
  const f = new MetricsFollower(new LocalHost(), path);
  await f.poll({ final: true });
  return f.series;
}

describe('seriesJsonChunks: the --json lines, written column-wise', () => {
  it('every metrics fixture (verl console, JSONL, TRL logs with NaN and infinities) comes out byte for byte as JSON.stringify per step wrote it', async () => {
    for (const name of [
      'verl-console-old.log',
      'verl-console-ray.log',
      'verl-metrics.jsonl',
      'verl-resumed.log',
      'trl-dpo-transformers5.log',
      'trl-grpo-transformers4.log',
      'trl-grpo-transformers5.log',
      'trl-ppo.log',
    ]) {
      const series = await parsed(join(FIX, name));
      assert.ok(series.length > 0, name);
      assert.equal(chunked(series), perRecord(series), name);
    }
  });

  it('a dense verl log of 2 MB (many chunks), steps missing metrics, steps out of order, numeric and non-ASCII keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-json-'));
    try {
      const file = join(dir, 'dense.log');
      await writeDenseVerlLog(file, 2e6);
      const series = await parsed(file);
      series.add({ step: 0, metrics: { '10': 1, '2': -0, 'val/héllo "x"': 1e-7, 'actor/entropy': NaN } });
      series.add({ step: 5, metrics: { 'critic/score/mean': Infinity, '2': -Infinity } });
      assert.equal(chunked(series), perRecord(series));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
