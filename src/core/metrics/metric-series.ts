import { Float64Column } from './float64-column';
import { processBlockSpill, type BlockSpill } from './block-spill';
import { setMetric } from './metric-value';

/** Metrics logged at one training step (validation-only steps too). */
export interface StepRecord {
  step: number;
  metrics: Record<string, number>;
  /** When the line was seen being written (ms since the epoch), for a run followed live. */
  observedAt?: number;
}

/**
 * Every metric of one run, column-wise: a sorted step column and one value column per metric (a step that did not log a
 * metric is "not logged"; a logged NaN or infinity is kept as such: a diverging loss must be seen). A step logged again (a resumed run repeats steps) overwrites the earlier values: the later value wins.
 * Columns are Float64Array blocks (8 bytes a value, off the JS heap), so 100k steps × 50 metrics stay around 40 MB.
 */
export class MetricSeries {
  readonly steps: number[] = [];
  private readonly observed: number[] = [];
  private readonly cols = new Map<string, Float64Column>();
  /** Counts steps added or logged again, so views know when what they derived (elapsed time, smoothing) is stale. */
  revision = 0;

  /** `spill`: the memory budget its columns' blocks count against (the process's, unless a short-lived series has its own). */
  constructor(private readonly spill: BlockSpill = processBlockSpill) {}

  get length(): number {
    return this.steps.length;
  }

  /**
   * Takes a run's steps, times seen and columns as a metrics cache file held them, in place of what it holds: nothing
   * (a dashboard opened again), or the first rows of the same log (read while another thread parsed all of it).
   */
  replaceWith(steps: number[], observed: number[], cols: Array<[string, Float64Column]>): void {
    this.steps.length = 0;
    this.observed.length = 0;
    this.cols.clear();
    // One at a time: spreading a million steps into push would pass a million arguments.
    for (const step of steps) this.steps.push(step);
    for (const t of observed) this.observed.push(t);
    for (const [k, col] of cols) this.cols.set(k, col);
    this.revision += steps.length;
  }

  /** When each row was seen being written (NaN where it was not), for a metrics cache file. */
  observedTimes(): readonly number[] {
    return this.observed;
  }

  metricNames(): string[] {
    return [...this.cols.keys()].sort();
  }

  has(metric: string): boolean {
    return this.cols.has(metric);
  }

  /** Each metric with its column, in the order the metrics were first logged (for writers that go column-wise). */
  columnEntries(): Array<[string, Float64Column]> {
    return [...this.cols];
  }

  /** The row index of a step, adding the step (in order) if it is new. */
  rowOf(step: number): number {
    const n = this.steps.length;
    this.revision++;
    let i: number;
    if (n === 0 || step > this.steps[n - 1]!) {
      i = n;
      this.steps.push(step);
      this.observed.push(NaN);
    } else {
      i = lowerBound(this.steps, step);
      if (this.steps[i] !== step) {
        this.steps.splice(i, 0, step);
        this.observed.splice(i, 0, NaN);
        for (const col of this.cols.values()) col.insertMissing(i);
      }
    }
    return i;
  }

  /**
   * Adds `steps` (ascending, each past the last step held) as new rows, and returns the first one's row: the steps of a
   * later range of the same log, parsed on another thread (split-parse.ts), whose columns are then written there.
   */
  appendSteps(steps: ArrayLike<number>): number {
    const base = this.steps.length;
    for (let i = 0; i < steps.length; i++) {
      const s = steps[i]!;
      if (!(s > (i > 0 ? steps[i - 1]! : (this.steps[base - 1] ?? -Infinity))))
        throw new Error(`appendSteps: step ${s} is not past the last one`);
      this.steps.push(s);
      this.observed.push(NaN);
    }
    this.revision += steps.length;
    return base;
  }

  /** A metric's column, or undefined when it was never logged. */
  existingColumn(metric: string): Float64Column | undefined {
    return this.cols.get(metric);
  }

  /** Sets one value at a row from `rowOf`. */
  put(row: number, metric: string, value: number): void {
    this.columnRef(metric).set(row, value);
  }

  /**
   * A metric's column itself (created empty if new), for the parsers' hot path: they keep it across lines with the same
   * keys and write with `set`. It stays the same array as rows are added.
   */
  columnRef(metric: string): Float64Column {
    let col = this.cols.get(metric);
    if (!col) {
      col = new Float64Column(this.spill);
      this.cols.set(metric, col);
    }
    return col;
  }

  /** When the step at a row from `rowOf` was seen being written (a live follower's read). */
  setObserved(row: number, at: number): void {
    this.observed[row] = at;
  }

  add(rec: StepRecord): void {
    const row = this.rowOf(rec.step);
    for (const k in rec.metrics) this.put(row, k, rec.metrics[k]!);
    if (rec.observedAt !== undefined) this.observed[row] = rec.observedAt;
  }

  /** A metric's values aligned with `steps`: undefined where a step did not log it (NaN is a logged NaN). */
  column(metric: string): Array<number | undefined> {
    const col = this.cols.get(metric);
    const out = new Array<number | undefined>(this.steps.length);
    for (let i = 0; i < out.length; i++) out[i] = col?.value(i);
    return out;
  }

  /** A metric's logged points, in step order. */
  points(metric: string): Array<{ step: number; value: number }> {
    const col = this.cols.get(metric);
    const out: Array<{ step: number; value: number }> = [];
    for (let i = 0; col && i < col.length; i++) if (col.has(i)) out.push({ step: this.steps[i]!, value: col.get(i) });
    return out;
  }

  /** Every metric logged at a row. */
  row(i: number): StepRecord {
    const metrics: Record<string, number> = {};
    for (const [k, col] of this.cols) if (col.has(i)) setMetric(metrics, k, col.get(i));
    const rec: StepRecord = { step: this.steps[i]!, metrics };
    const seen = this.observed[i]!;
    if (!Number.isNaN(seen)) rec.observedAt = seen;
    return rec;
  }

  /** The row of a step, or -1. */
  indexOf(step: number): number {
    const i = lowerBound(this.steps, step);
    return this.steps[i] === step ? i : -1;
  }

  *records(): Generator<StepRecord> {
    for (let i = 0; i < this.steps.length; i++) yield this.row(i);
  }

  /**
   * Seconds since the run started at each row: for verl the cumulative `timing_s/step` (older verl: `timing/step`),
   * which stays right for a log read long after the run; else from when each step was seen live. NaN where unknown.
   */
  elapsedSeconds(): number[] {
    const timing = this.cols.get('timing_s/step') ?? this.cols.get('timing/step');
    const out = new Array<number>(this.steps.length).fill(NaN);
    if (timing) {
      let sum = 0;
      for (let i = 0; i < out.length; i++) {
        const t = timing.get(i);
        if (Number.isNaN(t)) continue;
        sum += t;
        out[i] = sum;
      }
      return out;
    }
    const first = this.observed.find((t) => !Number.isNaN(t));
    if (first === undefined) return out;
    for (let i = 0; i < out.length; i++) if (!Number.isNaN(this.observed[i])) out[i] = (this.observed[i]! - first) / 1000;
    return out;
  }
}

/** The first index whose value is >= x in an ascending array (its length if none). */
export function lowerBound(a: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
