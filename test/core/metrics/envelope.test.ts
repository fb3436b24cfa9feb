import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Float64Column } from '../../../src/core/metrics/float64-column';
import { EnvelopePyramid, emptyAggregate, type Aggregate } from '../../../src/core/metrics/envelope';
import { BLOCK_ROWS } from '../../../src/core/metrics/block-spill';
import { MetricSeries } from '../../../src/core/metrics/metric-series';
import { SeriesCharts, snapEdge } from '../../../src/core/metrics/chart-view';

/**
 * The aggregate of rows [r0, r1), one row at a time: what the pyramid must equal; with the sum of the values' magnitudes,
 * which bounds how far two orders of adding them can differ.
 */
function bruteForce(col: Float64Column, r0: number, r1: number): Aggregate & { abs: number } {
  const a = { ...emptyAggregate(), abs: 0 };
  for (let i = r0; i < Math.min(r1, col.length); i++) {
    if (!col.has(i)) continue;
    const v = col.get(i);
    if (!Number.isFinite(v)) a.bad++;
    else {
      a.min = Math.min(a.min, v);
      a.max = Math.max(a.max, v);
      a.sum += v;
      a.abs += Math.abs(v);
      a.n++;
    }
  }
  return a;
}

function assertSame(got: Aggregate, want: Aggregate & { abs: number }, where: string): void {
  assert.equal(got.min, want.min, `min ${where}`);
  assert.equal(got.max, want.max, `max ${where}`);
  assert.equal(got.n, want.n, `n ${where}`);
  assert.equal(got.bad, want.bad, `bad ${where}`);
  // The pyramid adds node sums, the scan row by row. Each order is within n·ε·Σ|v| of the exact sum, so they are within
  // twice that of each other: where values cancel (±1e6 summing to 0.0007, seed 2158831278) that exceeds 1e-9 of the sum.
  const tolerance = Math.max(1e-9 * Math.max(1, Math.abs(want.sum)), 2 * want.n * Number.EPSILON * want.abs);
  assert.ok(Math.abs(got.sum - want.sum) <= tolerance, `sum ${where}: ${got.sum} vs ${want.sum}`);
}

// A value, a logged NaN or infinity, or a row not logged.
const cell = fc.oneof(
  { weight: 8, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity) },
  { weight: 2, arbitrary: fc.constant(undefined) },
);

describe('EnvelopePyramid: exact min, max and mean of any range', () => {
  it('equals a row-by-row scan for random columns and ranges, across every level', () => {
    fc.assert(
      fc.property(
        fc.array(cell, { maxLength: 20_000, size: 'max' }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 20 }),
        (cells, ranges) => {
          const col = new Float64Column();
          cells.forEach((v, i) => v !== undefined && col.set(i, v));
          const p = new EnvelopePyramid(col);
          for (const [a, b] of ranges) {
            const r0 = a % (cells.length + 1);
            const r1 = r0 + (b % (cells.length + 1 - r0));
            assertSame(p.aggregate(r0, r1), bruteForce(col, r0, r1), `[${r0}, ${r1}) of ${cells.length}`);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('sums values that cancel (±1e6 to a few thousandths) to within what adding them in another order allows', () => {
    // Pairs x, -x, every fifth with a few millionths more: a range's sum is tiny beside its values, where the node sums'
    // rounding and the row-by-row scan's differ by more than 1e-9 of it (1.9e-9 over [5982, 19524) here).
    const col = new Float64Column();
    let seed = 1;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 20_000; i += 2) {
      const x = (random() * 2 - 1) * 1e6;
      col.set(i, i % 10 === 0 ? x + 1e-5 * random() : x);
      col.set(i + 1, -x);
    }
    const p = new EnvelopePyramid(col);
    for (const [r0, r1] of [
      [5982, 19_524],
      [0, 20_000],
      [1, 19_999],
      [4096, 8191],
    ] as const)
      assertSame(p.aggregate(r0, r1), bruteForce(col, r0, r1), `[${r0}, ${r1})`);
  });

  it('stays exact as rows are appended, overwritten and inserted (a live run, a resumed run)', () => {
    const col = new Float64Column();
    const p = new EnvelopePyramid(col);
    let n = 0;
    const check = (what: string) => {
      for (const [r0, r1] of [
        [0, col.length],
        [1, col.length - 1],
        [4095, 300_000],
        [63, 64 * 64 + 1],
      ] as const)
        assertSame(p.aggregate(r0, r1), bruteForce(col, r0, r1), `${what} [${r0}, ${r1})`);
    };
    for (; n < 100_000; n++) col.set(n, Math.sin(n));
    check('after 100k appends');
    for (; n < 150_000; n++) col.set(n, Math.cos(n));
    check('after 50k more');
    col.set(10, 1e9); // a repeated step logged again: a new max far below the last block
    check('after an overwrite');
    col.insertMissing(5); // a step logged out of order shifts every row after it
    check('after an insert');
    col.set(70_000, NaN);
    check('after a NaN');
    assert.deepEqual(p.nonFiniteRows(5), [70_000]);
  });
});

describe('SeriesCharts: what a chart draws', () => {
  function series(n: number, value: (i: number) => number, key = 'loss'): MetricSeries {
    const s = new MetricSeries();
    const col = s.columnRef(key);
    for (let i = 0; i < n; i++) col.set(s.rowOf(i + 1), value(i));
    return s;
  }

  it('shows a single-step spike in a 1M-step series at full zoom-out, and the dip beside it', () => {
    const spikeAt = 612_345;
    const dipAt = 12_345;
    const s = series(1_000_000, (i) => (i === spikeAt ? 1e4 : i === dipAt ? -50 : 1 + 0.001 * Math.sin(i)));
    const view = new SeriesCharts(s).line({ key: 'loss', axis: 'step', range: null, width: 800, smoothing: 0.9 })!;
    assert.equal(view.mode, 'envelope');
    assert.ok(view.x.length <= 800, `one bucket per pixel column at most (${view.x.length})`);
    assert.equal(view.logged, 1_000_000);
    // The bucket holding the spike's step shows it as its max; every other bucket stays near 1.
    const his = view.hi.map((v) => v!);
    assert.equal(Math.max(...his), 1e4);
    const at = his.indexOf(1e4);
    const width = (view.extent!.x1 - view.extent!.x0) / 800;
    assert.ok(Math.abs(view.x[at]! - (spikeAt + 1)) <= width, `the spike is drawn at its step (${view.x[at]} vs ${spikeAt + 1})`);
    assert.equal(his.filter((v) => v > 2).length, 1, 'only one column shows the spike');
    assert.equal(Math.min(...view.lo.map((v) => v!)), -50);
    // The smoothed mean line stays near 1: the band, not the mean, shows the spike.
    assert.ok(
      view.y.every((v) => v! < 20),
      'the smoothed line is not pulled up across the chart',
    );
  });

  it('re-reads full resolution once a zoom shows fewer values than pixels', () => {
    const s = series(1_000_000, (i) => i % 7);
    const charts = new SeriesCharts(s);
    const view = charts.line({ key: 'loss', axis: 'step', range: { x0: 500_001, x1: 500_300 }, width: 800, smoothing: 0 })!;
    assert.equal(view.mode, 'points');
    // Every step in range, plus the nearest either side so the line reaches the edges.
    assert.deepEqual(
      view.x,
      Array.from({ length: 302 }, (_, k) => 500_000 + k),
    );
    assert.deepEqual(
      view.y,
      view.x.map((x) => (x - 1) % 7),
    );
  });

  it('draws a zoom from the pyramid alone, reading no row of the column, with each bucket exact to half a pixel', () => {
    // Steps with a gap (a resumed run) so rows and steps do not line up.
    const s = new MetricSeries();
    const col = s.columnRef('loss');
    const stepOf = (i: number) => (i < 150_000 ? i + 1 : i + 50_001);
    const value = (i: number) => Math.sin(i / 1000) + (i % 997 === 0 ? 5 : 0) - (i % 1009 === 0 ? 5 : 0);
    for (let i = 0; i < 300_000; i++) col.set(s.rowOf(stepOf(i)), value(i));
    const charts = new SeriesCharts(s);
    charts.line({ key: 'loss', axis: 'step', range: null, width: 800, smoothing: 0 });
    const reads = new Set<number>();
    const read = col.blockValues.bind(col);
    col.blockValues = (k: number) => {
      reads.add(k);
      return read(k);
    };
    const range = { x0: 100_000.5, x1: 260_000.25 };
    const view = charts.line({ key: 'loss', axis: 'step', range, width: 777, smoothing: 0 })!;
    assert.equal(view.mode, 'envelope');
    // Of 37 blocks, only two are read: the one where the steps jump (no row near that edge may move across it) and the
    // run's last rows past its last full node (for the whole run's count of values).
    assert.deepEqual(
      [...reads].sort((a, b) => a - b),
      [Math.floor(150_000 / BLOCK_ROWS), Math.floor((300_000 - 1) / BLOCK_ROWS)],
      'the blocks a zoom of 200 steps per pixel column read',
    );
    // Each bucket holds exactly the rows of a stretch of steps whose ends are within half a pixel column of its own.
    const dx = (range.x1 - range.x0) / 777;
    for (let k = 0; k < view.x.length; k++) {
      const j = Math.round((view.x[k]! - range.x0) / dx - 0.5);
      const within = (x0: number, x1: number) => {
        const a = emptyAggregate();
        for (let i = 0; i < 300_000; i++) {
          const x = stepOf(i);
          if (x < x0 || x > x1) continue;
          a.min = Math.min(a.min, value(i));
          a.max = Math.max(a.max, value(i));
        }
        return a;
      };
      const inner = within(range.x0 + j * dx + dx / 2, range.x0 + (j + 1) * dx - dx / 2);
      const outer = within(range.x0 + j * dx - dx / 2, range.x0 + (j + 1) * dx + dx / 2);
      assert.ok(view.hi[k]! >= inner.max && view.hi[k]! <= outer.max, `max of column ${j}`);
      assert.ok(view.lo[k]! <= inner.min && view.lo[k]! >= outer.min, `min of column ${j}`);
    }
    // Every spike and dip in the range is drawn: none falls between two buckets.
    const spikes = view.hi.filter((v) => v! > 3).length;
    const dips = view.lo.filter((v) => v! < -3).length;
    const count = (every: number) =>
      Array.from({ length: 300_000 }, (_, i) => i).filter((i) => i % every === 0 && stepOf(i) >= range.x0 && stepOf(i) <= range.x1).length;
    assert.equal(spikes, count(997));
    assert.equal(dips, count(1009));
  });

  it('moves a bucket edge to a pyramid node only when no row crosses it by more than the tolerance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 40 }), { minLength: 100, maxLength: 3000, size: 'max' }),
        fc.nat(),
        fc.double({ min: 0, max: 30, noNaN: true }),
        (gaps, at, tolerance) => {
          const xs: number[] = [];
          gaps.reduce((x, g) => (xs.push(x + g), x + g), 0);
          const target = xs[at % xs.length]! - 0.5;
          const row = xs.findIndex((x) => x >= target);
          const s = snapEdge(xs, row, target, tolerance, [4096, 64], 0, xs.length);
          // A node boundary, or the end it is kept within (the column's end, where its last node ends).
          assert.ok(s === row || s % 64 === 0 || s === xs.length, `${s} is a node boundary`);
          for (let i = Math.min(s, row); i < Math.max(s, row); i++) assert.ok(Math.abs(xs[i]! - target) <= tolerance);
        },
      ),
      // Found by seed 1561198248 in a run of .ci/run: 112 rows at 0 and one at 2; the row at 2 rounds up to 128, kept
      // within 113.
      { numRuns: 300, examples: [[[...Array<number>(112).fill(0), 2], 2147483639, 0.5]] },
    );
  });

  it('smooths over the whole run, so a zoomed-in smoothed line equals the same stretch of the full one', () => {
    const s = series(10_000, (i) => Math.sin(i / 10) + (i % 3));
    const charts = new SeriesCharts(s);
    const full = charts.line({ key: 'loss', axis: 'step', range: null, width: 20_000, smoothing: 0.8 })!;
    const zoomed = charts.line({ key: 'loss', axis: 'step', range: { x0: 9000, x1: 9100 }, width: 800, smoothing: 0.8 })!;
    assert.equal(full.mode, 'points');
    const byStep = new Map(full.x.map((x, k) => [x, full.y[k]]));
    for (let k = 0; k < zoomed.x.length; k++) assert.equal(zoomed.y[k], byStep.get(zoomed.x[k]!));
    // TensorBoard's debiased EMA: the first value is the first logged value.
    assert.equal(full.y[0], Math.sin(0));
  });

  it('names logged NaN and infinities with their steps and leaves them out of the drawing', () => {
    const s = series(5_000, (i) => (i === 4000 ? NaN : i === 4500 ? Infinity : i));
    const view = new SeriesCharts(s).line({ key: 'loss', axis: 'step', range: null, width: 100, smoothing: 0 })!;
    assert.equal(view.nonFiniteCount, 2);
    assert.deepEqual(
      view.nonFinite.map((b) => [b.step, String(b.value)]),
      [
        [4001, 'NaN'],
        [4501, 'Infinity'],
      ],
    );
    assert.ok(view.hi.every((v) => v === null || Number.isFinite(v)));
  });

  it('follows a live run: a new step after the first view is drawn in the next', () => {
    const s = series(100_000, () => 1);
    const charts = new SeriesCharts(s);
    assert.equal(charts.line({ key: 'loss', axis: 'step', range: null, width: 500, smoothing: 0 })!.extent!.x1, 100_000);
    s.columnRef('loss').set(s.rowOf(100_001), 99);
    const view = charts.line({ key: 'loss', axis: 'step', range: null, width: 500, smoothing: 0.5 })!;
    assert.equal(view.extent!.x1, 100_001);
    assert.equal(Math.max(...view.hi.map((v) => v!)), 99);
  });
});
