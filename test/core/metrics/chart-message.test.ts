import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromWire, toDashboard, toWire } from '../../../src/protocol/dashboard';

/** A chart's answer as the extension host sends it: its lines' values as typed arrays, which cross as bytes. */
function chartMessage(values: { x: unknown; lo: unknown; hi: unknown; y: unknown }) {
  return {
    type: 'chart',
    chartId: 'reward',
    seq: 3,
    range: null,
    error: null,
    lines: [{ runId: 'r1', key: 'critic/score/mean', mode: 'envelope', logged: 3, nonFinite: [], nonFiniteCount: 0, ...values }],
  };
}

describe('the dashboard chart message', () => {
  it('carries its values as Float64Arrays, and a gap (null) as NaN that the page reads back as null', () => {
    const y = [0.5, null, -0, 1e-300, 7];
    const wire = toWire(y);
    assert.ok(wire instanceof Float64Array);
    assert.ok(Number.isNaN(wire[1]));
    const msg = toDashboard.parse(chartMessage({ x: toWire([1, 2, 3, 4, 5]), lo: wire, hi: wire, y: wire }));
    assert.equal(msg.type, 'chart');
    const line = fromWire(msg.type === 'chart' ? msg.lines[0]! : assert.fail());
    assert.deepEqual(line.x, [1, 2, 3, 4, 5]);
    assert.deepEqual(line.y, y);
    assert.ok(Object.is(line.lo[2], -0), 'values come back bit for bit');
  });

  it('refuses values sent as number arrays (JSON text through code-server: about 25 ms more per frame for ten runs)', () => {
    const parsed = toDashboard.safeParse(chartMessage({ x: [1, 2], lo: [0, null], hi: [1, null], y: [0.5, null] }));
    assert.equal(parsed.success, false);
  });
});
