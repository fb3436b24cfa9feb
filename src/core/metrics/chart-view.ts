import { Float64Column } from './float64-column';
import { EnvelopePyramid } from './envelope';
import { lowerBound, type MetricSeries } from './metric-series';

export type ChartAxis = 'step' | 'time';

/** What a chart asks of one run: a metric over an x range (null: all of it), in `width` pixel columns, smoothed or not. */
export interface LineRequest {
  key: string;
  axis: ChartAxis;
  range: { x0: number; x1: number } | null;
  width: number;
  /** TensorBoard's EMA weight, 0 for none: applied to the full series, then drawn like any other. */
  smoothing: number;
}

/**
 * One run's line on a chart, ready to draw. `points`: every logged value in the range (and one either side, so the line
 * runs to the edges), `lo` = `hi` = the raw value and `y` the drawn (smoothed) one. `envelope`: one bucket per pixel
 * column with the exact min (`lo`) and max (`hi`) of the raw values in it and the mean of the drawn values (`y`); a bucket
 * with no finite value is null (a gap). Sent instead of the series: the page holds only what is on screen.
 */
export interface LineView {
  key: string;
  mode: 'points' | 'envelope';
  x: number[];
  lo: (number | null)[];
  hi: (number | null)[];
  y: (number | null)[];
  /** Values logged for the metric in the whole run (NaN and infinities included). */
  logged: number;
  /** The first logged NaN and infinities, with their steps (never drawn, so named). */
  nonFinite: Array<{ step: number; value: number }>;
  nonFiniteCount: number;
  /** The x range the whole line covers (null when nothing can be placed on this axis). */
  extent: { x0: number; x1: number } | null;
}

const NON_FINITE_SHOWN = 3;

interface Smoothed {
  weight: number;
  revision: number;
  col: Float64Column;
  pyramid: EnvelopePyramid;
}

/**
 * Draws one run's metrics for charts, from the run's MetricSeries where it is held (the extension host): exact per-pixel
 * envelopes from each metric's pyramid, re-read at full resolution once a zoom shows fewer values than pixels.
 */
export class SeriesCharts {
  private readonly pyramids = new Map<string, EnvelopePyramid>();
  private readonly smoothedCache = new Map<string, Smoothed>();
  private elapsed: { revision: number; xs: Float64Array } | undefined;

  constructor(readonly series: MetricSeries) {}

  line(req: LineRequest): LineView | undefined {
    const col = this.series.existingColumn(req.key);
    if (!col) return undefined;
    const raw = this.pyramid(req.key, col);
    const whole = raw.aggregate(0, col.length);
    const xs = this.xs(req.axis);
    const bad = raw.nonFiniteRows(NON_FINITE_SHOWN).map((i) => ({ step: this.series.steps[i]!, value: col.get(i) }));
    const view: LineView = {
      key: req.key,
      mode: 'points',
      x: [],
      lo: [],
      hi: [],
      y: [],
      logged: whole.n + whole.bad,
      nonFinite: bad,
      nonFiniteCount: whole.bad,
      extent: extentOf(col, xs),
    };
    if (!view.extent) return view;
    const { x0, x1 } = req.range ?? view.extent;
    const drawn = req.smoothing > 0 ? this.smoothed(req.key, col, req.smoothing) : { col, pyramid: raw };
    // Rows in [x0, x1] (xs is ascending: steps, or elapsed seconds carried over rows without a time).
    const r0 = lowerBound(xs, x0);
    const r1 = upperBound(xs, x1);
    const width = Math.max(1, Math.floor(req.width));
    const dx = (x1 - x0) / width;
    // Bucket edges move to the nearest pyramid node boundary when that shifts no row by more than half a pixel column: the
    // buckets' extremes stay exact (every row is in exactly one), and a zoom reads the pyramid instead of the column's
    // blocks, which may have gone back to disk since the first drawing (a dashboard opened again).
    const sizes = raw.nodeSizesUpTo((r1 - r0) / width);
    const tolerance = dx / 2;
    const last = snapEdge(xs, r1, x1, tolerance, sizes, r0, col.length);
    const first = snapEdge(xs, r0, x0, tolerance, sizes, 0, last);
    const inView = raw.aggregate(first, last);
    if (inView.n + inView.bad <= width) {
      // Full resolution: every logged value, plus the nearest outside each edge.
      const from = prevLogged(col, r0 - 1, xs);
      const to = nextLogged(col, r1, xs);
      for (let i = from < 0 ? r0 : from; i < (to < 0 ? r1 : to + 1); i++) {
        if (!col.has(i) || !Number.isFinite(xs[i]!)) continue;
        const v = col.get(i);
        const finite = Number.isFinite(v);
        view.x.push(xs[i]!);
        view.lo.push(finite ? v : null);
        view.hi.push(finite ? v : null);
        const d = drawn.col.get(i);
        view.y.push(finite && Number.isFinite(d) ? d : null);
      }
      return view;
    }
    view.mode = 'envelope';
    let start = first;
    for (let j = 0; j < width; j++) {
      const target = x0 + (j + 1) * dx;
      const end = j === width - 1 ? last : snapEdge(xs, lowerBound(xs, target), target, tolerance, sizes, start, last);
      if (end <= start) continue;
      const a = raw.aggregate(start, end);
      const m = drawn.pyramid === raw ? a : drawn.pyramid.aggregate(start, end);
      start = end;
      if (a.n + a.bad === 0) continue;
      view.x.push(x0 + (j + 0.5) * dx);
      view.lo.push(a.n ? a.min : null);
      view.hi.push(a.n ? a.max : null);
      view.y.push(m.n ? m.sum / m.n : null);
    }
    return view;
  }

  /** The x range a metric's logged values cover on the axis (null: none, or none with a place on it). */
  extent(key: string, axis: ChartAxis): { x0: number; x1: number } | null {
    const col = this.series.existingColumn(key);
    return col ? extentOf(col, this.xs(axis)) : null;
  }

  private pyramid(key: string, col: Float64Column): EnvelopePyramid {
    let p = this.pyramids.get(key);
    // A series that took a cached parse has new columns (MetricSeries.replaceWith).
    if (p?.col !== col) this.pyramids.set(key, (p = new EnvelopePyramid(col)));
    return p;
  }

  /**
   * The metric smoothed over the whole run (TensorBoard's debiased EMA over its finite values, in step order; NaN and
   * infinities stay as they are), kept until the series or the weight changes.
   */
  smoothedColumn(key: string, weight: number): Float64Column | undefined {
    const col = this.series.existingColumn(key);
    return col && weight > 0 ? this.smoothed(key, col, weight).col : col;
  }

  private smoothed(key: string, col: Float64Column, weight: number): Smoothed {
    const kept = this.smoothedCache.get(key);
    if (kept && kept.weight === weight && kept.revision === this.series.revision) return kept;
    const out = new Float64Column();
    let last = 0;
    let n = 0;
    for (let i = 0; i < col.length; i++) {
      if (!col.has(i)) continue;
      const v = col.get(i);
      if (!Number.isFinite(v)) {
        out.set(i, v);
        continue;
      }
      last = last * weight + (1 - weight) * v;
      n++;
      out.set(i, last / (1 - weight ** n));
    }
    const s = { weight, revision: this.series.revision, col: out, pyramid: new EnvelopePyramid(out) };
    this.smoothedCache.set(key, s);
    return s;
  }

  /** Each row's x on the axis, ascending: its step, or its elapsed seconds (a row without a time takes the one before). */
  private xs(axis: ChartAxis): ArrayLike<number> {
    if (axis === 'step') return this.series.steps;
    if (this.elapsed?.revision === this.series.revision) return this.elapsed.xs;
    const seconds = this.series.elapsedSeconds();
    const xs = new Float64Array(seconds.length);
    let carried = -Infinity;
    for (let i = 0; i < xs.length; i++) xs[i] = carried = Number.isNaN(seconds[i]!) ? carried : Math.max(carried, seconds[i]!);
    this.elapsed = { revision: this.series.revision, xs };
    return xs;
  }
}

/**
 * Row `row`, the first at or past x `target`, moved to a multiple of the largest node size whose move shifts no row across
 * `target` by more than `tolerance` on the axis (kept within [lo, hi]); the row itself when none does.
 */
export function snapEdge(
  xs: ArrayLike<number>,
  row: number,
  target: number,
  tolerance: number,
  sizes: readonly number[],
  lo: number,
  hi: number,
): number {
  for (const size of sizes) {
    const s = Math.min(hi, Math.max(lo, Math.round(row / size) * size));
    if (s === row) return row;
    // Rows [row, s) move before the edge, or rows [s, row) after it: the farthest of them from the target decides.
    if (s > row ? xs[s - 1]! - target <= tolerance : target - xs[s]! <= tolerance) return s;
  }
  return row;
}

/** The x of the first and last logged values that have a place on the axis. */
function extentOf(col: Float64Column, xs: ArrayLike<number>): { x0: number; x1: number } | null {
  const first = nextLogged(col, 0, xs);
  const last = prevLogged(col, col.length - 1, xs);
  return first < 0 || last < 0 ? null : { x0: xs[first]!, x1: xs[last]! };
}

function nextLogged(col: Float64Column, from: number, xs: ArrayLike<number>): number {
  for (let i = Math.max(0, from); i < col.length; i++) if (col.has(i) && Number.isFinite(xs[i]!)) return i;
  return -1;
}

function prevLogged(col: Float64Column, from: number, xs: ArrayLike<number>): number {
  for (let i = Math.min(from, col.length - 1); i >= 0; i--) if (col.has(i) && Number.isFinite(xs[i]!)) return i;
  return -1;
}

/** The first index whose value is > x (rows at exactly x1 are in the range). */
function upperBound(a: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
