import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import type { MetricSeries } from '../../../src/core/metrics/metric-series';
import { parseTrainerState } from '../../../src/core/metrics/trl-trainer-state';

const host = new LocalHost();

/**
 * Reads a real run's output.log and checks every log_history entry of its trainer_state.json (the ground truth) against
 * the step and values parsed from the console: transformers 5 prints each float as f"{v:.4g}" (ProgressCallback.on_log).
 */
export async function checkAgainstTrainerState(log: string, state: string): Promise<MetricSeries> {
  const f = new MetricsFollower(host, log);
  await f.poll({ final: true });
  assert.deepEqual(await f.problems(), []);
  const { records } = parseTrainerState(readFileSync(state, 'utf8'), state);
  assert.ok(records.length > 0, `${state}: no log_history`);
  const truthSteps = [...new Set(records.map((r) => r.step))];
  assert.deepEqual(
    f.series.steps.filter((s) => s <= truthSteps.at(-1)!),
    truthSteps,
    `${log}: the logged steps`,
  );
  for (const r of records) {
    const row = f.series.row(f.series.indexOf(r.step)).metrics;
    for (const [k, v] of Object.entries(r.metrics)) {
      if (k === 'total_flos') continue; // ProgressCallback pops it before printing
      const msg = `${log}: step ${r.step} ${k}: log ${row[k]}, trainer_state ${v}`;
      if (!Number.isFinite(v) || v === 0) assert.equal(row[k], v, msg);
      // Within half a unit of the 4th significant digit (Python rounds exact ties to even: 0.15625 prints 0.1562).
      else
        assert.ok(row[k] !== undefined && Math.abs(row[k]! - v) <= 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(v))) - 3) * (1 + 1e-9), msg);
    }
  }
  return f.series;
}
