import type { Line, LineBytes } from '../io/line-reader';
import { MetricSeries } from './metric-series';
import type { Float64Column } from './float64-column';
import { parseVerlConsoleLine, scanVerlConsoleLine, StepLineScan, type ParsedStepLine } from './verl-console';
import { parseVerlJsonlLine } from './verl-jsonl';
import { parseTrlDict, TrlStepTracker, type ParsedTrlDict } from './trl-log';
import { MissingValues } from './missing-values';
import type { ParserState } from './parser-state';
import { stripAnsi } from '../format/terminal-text';

/** A TRL dict waiting for its step, with where it was read. */
type PendingDict = ParsedTrlDict & { offset: number; observedAt: number | undefined };

/** tqdm moves the cursor up after drawing a bar below another (position > 0: transformers' evaluation bar during training). */
const CURSOR_UP = '\x1b[A';

export type { Framework } from './headline-defs';
import type { Framework } from './headline-defs';
import { errorMessage } from '../errors/located-error';

/** A parser's state after one byte range of a log (rangeState), to merge into the parse of the ranges before it. */
export interface RangeParserState extends ParserState {
  problems: LineProblem[];
  droppedProblems: number;
}

/** A line that looked like metrics but was (partly) unreadable: where it starts (byte offset) and why. */
export interface LineProblem {
  offset: number;
  message: string;
  field?: string;
}

/** The marker of a verl console step line: a log that has shown only those is read in runs (feedRun). */
const STEP_MARKER = 'step:';
/**
 * The strings every metrics line contains: `readLines(..., { matching })` skips all other lines without decoding them.
 * `%|` is a tqdm bar: TRL dicts take their step from the training bar drawn after them.
 */
const METRIC_LINE_MARKERS = [STEP_MARKER, '"step"', "{'", '%|'];
const TRL_MARKERS = ["{'", '%|'];

const MAX_PROBLEMS = 200;

/**
 * Turns log lines into a MetricSeries, whatever the trainer: verl console step lines, verl file-logger JSONL, TRL's
 * printed dicts (between tqdm bars and warnings). Each line identifies its own format; the others are ignored. Keeps its
 * state between calls, so a follower feeds it lines as the log grows. Unreadable parts are reported with their offset,
 * and the rest of the line is still used.
 */
export class MetricLogParser {
  readonly series: MetricSeries;
  framework: Framework | undefined;
  readonly problems: LineProblem[] = [];
  /** Problems beyond the first MAX_PROBLEMS are counted, not kept (a corrupt 1 GB log must not fill memory). */
  droppedProblems = 0;
  /** Values logged as None, per metric: one note each (MetricsFollower.notes). */
  readonly missing = new MissingValues();
  private readonly trl = new TrlStepTracker<PendingDict>();
  /** The verl step line scanner; each key's slot holds its column. */
  private readonly scan = new StepLineScan<Float64Column>();
  /** Which kinds of metric line this log has shown, to narrow the markers a reader scans for. */
  private readonly seen = new Set<'console' | 'jsonl' | 'trl'>();
  /** The step whose console line ended in an unreadable value (maybe torn): its next line may carry the rest. */
  private tornStep: number | undefined;

  constructor(series = new MetricSeries()) {
    this.series = series;
  }

  /**
   * The markers to scan for from here on: all three until the log shows its format, then only that format's (one
   * byte scan instead of three over a 1 GB log).
   */
  markers(): string[] {
    if (this.seen.size !== 1) return METRIC_LINE_MARKERS;
    return this.seen.has('console') ? [STEP_MARKER] : this.seen.has('jsonl') ? ['"step"'] : TRL_MARKERS;
  }

  /**
   * The state to keep in a metrics cache file, or undefined when it cannot be kept: problems (their messages quote the
   * log, and a cache holds no text of it), a torn step line waiting for its rest, or TRL dicts (their steps depend on
   * progress bars drawn around them).
   */
  cacheState(): ParserState | undefined {
    if (this.problems.length > 0 || this.droppedProblems > 0 || this.tornStep !== undefined) return undefined;
    if (this.seen.has('trl') || this.trl.hasPending || this.trl.bar !== undefined) return undefined;
    const seen = [...this.seen].filter((k): k is ParserState['seen'][number] => k !== 'trl'); // none: checked above
    return { framework: this.framework ?? null, seen, missing: this.missing.toJSON() };
  }

  /**
   * What a parse of one byte range of a log (split-parse.ts) hands over besides its series, or undefined when the range
   * cannot be parsed apart from the lines before and after it: TRL output (a dict's step is in the bar drawn after it,
   * maybe in the next range) or a step line torn at the range's end (the next range's first line may hold its rest).
   */
  rangeState(): RangeParserState | undefined {
    if (this.tornStep !== undefined || this.seen.has('trl') || this.trl.hasPending || this.trl.bar !== undefined) return undefined;
    return {
      framework: this.framework ?? null,
      seen: [...this.seen].filter((k): k is ParserState['seen'][number] => k !== 'trl'), // none: checked above
      missing: this.missing.toJSON(),
      problems: this.problems,
      droppedProblems: this.droppedProblems,
    };
  }

  /** Whether the log has shown only verl console step lines, so it is read in runs of lines (feedRun). */
  readsRuns(): boolean {
    return this.seen.size === 1 && this.seen.has('console');
  }

  /** Takes on the state of the next range of the log, parsed apart (its series is merged by the caller). */
  absorbRange(state: RangeParserState): void {
    this.framework ??= state.framework ?? undefined;
    for (const k of state.seen) this.seen.add(k);
    this.missing.merge(state.missing);
    for (const p of state.problems) this.problem(p.offset, p.message, p.field);
    this.droppedProblems += state.droppedProblems;
  }

  /** Goes on from a cached parse (a fresh parser, whose series took the cached one). */
  restore(state: ParserState): void {
    this.framework = state.framework ?? undefined;
    for (const k of state.seen) this.seen.add(k);
    this.missing.restore(state.missing);
  }

  /**
   * Parses one line from its bytes (the hot path of a large log): a verl console step line goes from the bytes straight
   * into the series; any other line is decoded and parsed as text. Returns the step it logged, if any.
   */
  feedBytes(line: Pick<LineBytes, 'buf' | 'from' | 'to' | 'start'>, observedAt?: number): number | undefined {
    const scan = this.scan;
    if (scanVerlConsoleLine(line.buf, line.from, line.to, scan) && !scan.otherFormat) return this.addScan(line.start, observedAt);
    return this.feed({ text: line.buf.toString('utf8', line.from, line.to), start: line.start }, observedAt);
  }

  /**
   * Parses a run of whole lines b[from, to) (`to` just past a newline; `start` is b[from]'s offset in the log) as
   * feedBytes would parse each of them that holds `step:`, the others skipped: verl console step lines in batches
   * through the WebAssembly scanner (scan-parts.ts's readRun), the rest line by line. Returns how many steps it read.
   */
  feedRun(b: Buffer, from: number, to: number, start: number, observedAt?: number): number {
    let steps = 0;
    const other = (lf: number, lt: number) => {
      if (this.feedBytes({ buf: b, from: lf, to: lt, start: start + lf - from }, observedAt) !== undefined) steps++;
    };
    // The parser's scan always has the module (only a scan made to compare with goes without).
    const parts = this.scan.parts!;
    parts.readRun(b, from, to, this.scan, {
      lines: (n, stepsAt, counts, values) => {
        this.addLines(n, stepsAt, counts, values, observedAt);
        steps += n;
      },
      other,
    });
    return steps;
  }

  /**
   * Stores `n` console step lines read whole by the WebAssembly scanner, each with the keys at its places that the
   * scan holds (their slots): runs of lines with the same number of parts and steps past the last are written a column
   * at a time.
   */
  private addLines(n: number, steps: Float64Array, counts: Int32Array, values: Float64Array, observedAt: number | undefined): void {
    const scan = this.scan;
    const series = this.series;
    this.framework ??= 'verl';
    this.seen.add('console');
    this.tornStep = undefined;
    for (let l = 0, v = 0; l < n;) {
      const count = counts[l]!;
      const last = series.length - 1;
      const row = series.rowOf(steps[l]!);
      let m = 1;
      if (row > last) {
        while (l + m < n && counts[l + m] === count && steps[l + m]! > steps[l + m - 1]!) {
          series.rowOf(steps[l + m]!);
          m++;
        }
      }
      for (let i = 0; i < count; i++) {
        const col = scan.slots[i] ?? (scan.slots[i] = series.columnRef(scan.placeKey(i)));
        col.setRows(row, values, v + i, count, m);
      }
      if (observedAt !== undefined) for (let r = 0; r < m; r++) series.setObserved(row + r, observedAt);
      v += count * m;
      l += m;
    }
  }

  /** Parses one line of text; `observedAt` is when a live follower read it. Returns the step it logged, if any. */
  feed(line: Pick<Line, 'text' | 'start'>, observedAt?: number): number | undefined {
    const text = line.text;
    if (text.includes("{'") || text.includes('\r') || text.includes('%|')) return this.feedTrl(line, observedAt);
    if (text.includes('"step"')) {
      let parsed: ParsedStepLine | undefined;
      try {
        parsed = parseVerlJsonlLine(text);
      } catch (err) {
        this.problem(line.start, `verl metrics record: ${errorMessage(err)}`);
        return undefined;
      }
      if (parsed) {
        this.seen.add('jsonl');
        return this.addStep(line.start, parsed, 'verl', observedAt);
      }
    }
    const bytes = Buffer.from(text);
    if (!scanVerlConsoleLine(bytes, 0, bytes.length, this.scan)) {
      if (this.scan.badStep !== undefined) {
        this.tornStep = undefined;
        this.problem(line.start, `a verl step line whose step is not a number ("${this.scan.badStep}"): skipped`);
        return undefined;
      }
      return this.continueTornLine(line);
    }
    return this.addScan(line.start, observedAt);
  }

  /** Stores the console step line just scanned. */
  private addScan(offset: number, observedAt: number | undefined): number {
    const scan = this.scan;
    this.framework ??= 'verl';
    this.seen.add('console');
    const row = this.series.rowOf(scan.step);
    for (let i = 0; i < scan.count; i++) {
      const col = scan.slots[i] ?? (scan.slots[i] = this.series.columnRef(scan.key(i)));
      col.set(row, scan.values[i]!);
    }
    if (observedAt !== undefined) this.series.setObserved(row, observedAt);
    for (const b of scan.bad) this.badMetric(offset, scan.step, b);
    for (const k of scan.missing) this.missing.add(k, scan.step);
    this.tornStep = scan.lastBad ? scan.step : undefined;
    return scan.step;
  }

  /**
   * stderr written into the middle of a step line (two writers on one log) ends the line early; the rest of the step's
   * metrics follow on the next line, starting with the tail of the torn value. They are kept for that step.
   */
  private continueTornLine(line: Pick<Line, 'text' | 'start'>): number | undefined {
    const step = this.tornStep;
    this.tornStep = undefined;
    const sep = line.text.indexOf(' - ');
    if (step === undefined || sep < 0 || line.text.slice(0, sep).includes('step:')) return undefined;
    const parsed = parseVerlConsoleLine(`step:${step}${line.text.slice(sep)}`);
    if (!parsed || Object.keys(parsed.metrics).length === 0) return undefined;
    this.problem(
      line.start,
      `step ${step}: the rest of a step line torn by other output; its first value "${line.text.slice(0, Math.min(sep, 40))}" is lost, the others are kept`,
    );
    return this.addStep(line.start, parsed, 'verl', undefined);
  }

  /**
   * A TRL dict waits for the training bar drawn after it (TrlStepTracker); `flush()` gives it its best step when the
   * log has ended. True while one waits.
   */
  get pendingTrl(): boolean {
    return this.trl.hasPending;
  }

  /** The training bar's last drawing (TRL), from which a run's progress reads: its step and max_steps. */
  get trainingBar(): { n: number; total: number } | undefined {
    const b = this.trl.bar;
    return b && { n: b.n, total: b.total };
  }

  /** The log has ended (or a tail was read whole): a TRL dict still waiting for its bar takes its best step. */
  flush(): number | undefined {
    const done = this.trl.flush();
    return done ? this.addTrl(done) : undefined;
  }

  /**
   * Reads only the progress bars of text that is not a complete line yet (a live log's last line, which holds the
   * training bar drawn after the last dict), so the last dict gets its step without waiting for the next one.
   */
  peekBars(text: string): number | undefined {
    let last: number | undefined;
    for (const raw of text.split(/[\r\n]/)) {
      const done = this.trl.sawText(stripAnsi(raw), raw.includes(CURSOR_UP));
      if (done) last = this.addTrl(done);
    }
    return last;
  }

  private feedTrl(line: Pick<Line, 'text' | 'start'>, observedAt: number | undefined): number | undefined {
    let last: number | undefined;
    const segs = line.text.split('\r');
    for (let k = 0; k < segs.length; k++) {
      const seg = stripAnsi(segs[k]!);
      const open = seg.indexOf("{'");
      const trimmed = seg.trim();
      if (open < 0 || !trimmed.startsWith("{'")) {
        // verl console lines can share a line with carriage returns too.
        const verl = parseVerlConsoleLine(seg);
        if (verl) {
          this.seen.add('console');
          last = this.addStep(line.start, verl, 'verl', observedAt);
          continue;
        }
        const done = this.trl.sawText(seg, segs[k]!.includes(CURSOR_UP));
        if (done) last = this.addTrl(done);
        continue;
      }
      let dict;
      try {
        dict = parseTrlDict(trimmed);
      } catch (err) {
        this.problem(line.start, `TRL log dict: ${errorMessage(err)}`);
        continue;
      }
      if (Object.keys(dict.metrics).length === 0) continue;
      this.seen.add('trl');
      this.framework ??= 'trl';
      // tqdm.write (transformers' ProgressCallback) clears the bar before the dict: `\r<spaces>\r{...}`, then redraws it.
      const cleared = k > 0 && segs[k - 1]!.trim() === '';
      for (const done of this.trl.sawDict({ ...dict, offset: line.start, observedAt }, cleared)) last = this.addTrl(done);
    }
    return last;
  }

  private addTrl(done: { dict: PendingDict; step: number }): number {
    const d = done.dict;
    return this.addStep(d.offset, { step: done.step, metrics: d.metrics, bad: d.bad, missing: d.missing }, 'trl', d.observedAt);
  }

  private addStep(offset: number, parsed: ParsedStepLine, framework: Framework, observedAt: number | undefined): number {
    this.framework ??= framework;
    const s = this.series;
    const row = s.rowOf(parsed.step);
    const m = parsed.metrics;
    for (const k in m) s.put(row, k, m[k]!);
    if (observedAt !== undefined) s.add({ step: parsed.step, metrics: {}, observedAt });
    for (const b of parsed.bad) this.badMetric(offset, parsed.step, b);
    for (const k of parsed.missing ?? []) this.missing.add(k, parsed.step);
    return parsed.step;
  }

  private badMetric(offset: number, step: number, part: string): void {
    this.problem(
      offset,
      `step ${step}: unreadable metric "${part.length > 80 ? `${part.slice(0, 80)}…` : part}" (the rest of the line is kept)`,
      fieldOf(part),
    );
  }

  private problem(offset: number, message: string, field?: string): void {
    if (this.problems.length >= MAX_PROBLEMS) {
      this.droppedProblems++;
      return;
    }
    this.problems.push(field ? { offset, message, field } : { offset, message });
  }
}

/** A `key:value` part's key (its text before the first ':'), found without splitting what may be a 100 MB value. */
function fieldOf(part: string): string {
  const colon = part.indexOf(':');
  return colon < 0 ? part : part.slice(0, colon);
}
