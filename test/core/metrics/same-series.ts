import assert from 'node:assert/strict';
import type { MetricSeries } from '../../../src/core/metrics/metric-series';

/** Every step, and every metric's value or absence at it, as a user would read them (NaN and "not logged" apart). */
export function assertSameSeries(got: MetricSeries, want: MetricSeries): void {
  assert.deepEqual(got.steps, want.steps);
  assert.deepEqual(got.metricNames(), want.metricNames());
  for (const name of want.metricNames()) {
    const a = got.existingColumn(name)!;
    const b = want.existingColumn(name)!;
    assert.equal(a.length, b.length, name);
    for (let i = 0; i < b.length; i++) {
      if (a.has(i) !== b.has(i) || !Object.is(a.get(i), b.get(i))) assert.fail(`${name} at row ${i}: ${a.value(i)} against ${b.value(i)}`);
    }
  }
}
