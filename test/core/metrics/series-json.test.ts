import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricSeries } from '../../../src/core/metrics/metric-series';
import { BLOCK_BYTES, BlockSpill } from '../../../src/core/metrics/block-spill';
import { jsonMetrics } from '../../../src/core/metrics/json-metric';
import { seriesJsonChunks } from '../../../src/core/metrics/series-json';
import { seriesJsonOutput } from '../../../src/core/metrics/series-json-workers';
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

  it('rows over several blocks with nearly every block spilled: metrics that stop, start late, skip steps or log NaN', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-json-'));
    try {
      // A budget of two blocks for eight columns of three blocks each: all but each column's last block are spilled, and
      // the writer reads them back as it goes.
      const spill = new BlockSpill({ budgetBytes: 2 * BLOCK_BYTES, dir });
      const series = new MetricSeries(spill);
      for (let step = 1; step <= 20_000; step++) {
        const m: Record<string, number> = { 'critic/score/mean': step / 7, 'actor/entropy': step % 500 === 0 ? NaN : 1 / step };
        if (step <= 9_000) m['val/early'] = step * 0.1;
        if (step > 12_000) m['val/late'] = -step;
        if (step % 7 === 0) m['timing/every7'] = step * 1e-9;
        for (let c = 0; c < 3; c++) m[`perf/c${c}`] = step + c / 3;
        series.add({ step, metrics: m });
      }
      assert.ok(spill.fileBytes >= 8 * BLOCK_BYTES, `${spill.fileBytes} bytes spilled`);
      assert.equal(chunked(series), perRecord(series));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run with more metrics than fit one tile of rows (1,100 metrics: the rows are copied out 512 at a time)', () => {
    const series = new MetricSeries();
    for (let step = 0; step < 1_200; step++) {
      const m: Record<string, number> = {};
      for (let c = 0; c < 1_100; c++) if ((step + c) % 5 !== 0) m[`m/${c}`] = step * 1_000 + c + 0.5;
      series.add({ step, metrics: m });
    }
    assert.equal(chunked(series), perRecord(series));
  });

  it('written by worker threads (a large series): byte for byte what one thread writes, jobs in order, spilled blocks read back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-json-'));
    try {
      const spill = new BlockSpill({ budgetBytes: 4 * BLOCK_BYTES, dir });
      const series = new MetricSeries(spill);
      for (let step = 3; step <= 3 * 30_001; step += 3) {
        const m: Record<string, number> = { 'critic/score/mean': step / 7, 'actor/entropy': step % 999 === 0 ? NaN : 1 / step };
        if (step < 40_000) m['val/early'] = step * 0.1;
        if (step % 5 === 0) m['7'] = step % 2 ? Infinity : -Infinity;
        for (let c = 0; c < 6; c++) m[`perf/c${c}`] = Math.sqrt(step + c);
        series.add({ step, metrics: m });
      }
      assert.ok(spill.fileBytes > 0, 'some blocks spilled');
      const want = chunked(series);
      assert.equal(want, perRecord(series));
      // Small jobs (256 rows for 10 metrics), so that many are out at once and finish in any order.
      const chunks: Uint8Array[] = [];
      for await (const c of seriesJsonOutput(series, 3, 20 << 10)) chunks.push(c);
      assert.ok(chunks.length > 100, `${chunks.length} jobs`);
      assert.equal(Buffer.concat(chunks).toString('utf8'), want);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
