import { z } from 'zod';
import { jsonMetricSchema } from '../core/metrics/json-metric';

/** Messages between the run dashboard webview and the extension host (zod on both sides). */

const framework = z.enum(['verl', 'trl']).nullable();

const dashboardRun = z.object({
  id: z.string(),
  label: z.string(),
  /** `host:path` of the run folder or file, for the legend's tooltip. */
  where: z.string(),
  /** Its colour (colourSlots, by run id): the theme's chart colours 0-5 solid, 6-11 dashed; a run's own in every session. */
  colour: z.number().int().min(0),
});
export type DashboardRun = z.infer<typeof dashboardRun>;

const axis = z.enum(['step', 'time']);
const range = z.object({ x0: z.number(), x1: z.number() }).refine((r) => r.x0 <= r.x1, 'x0 after x1');
/** A chart's metric for one run (the page picks the key: a headline's per framework, or a searched metric). */
const lineKey = z.object({ runId: z.string(), key: z.string() });
/**
 * A line's values, one per point or pixel column, NaN where a column has none. Typed arrays cross from the extension
 * host to the page as bytes, where number arrays went as JSON text: ten runs' lines of one chart are 300 KB of it.
 */
const drawn = z.instanceof(Float64Array);

/** One run's line on a chart (LineView in src/core/metrics/chart-view.ts): only what is on screen, never the series. */
const chartLine = z.object({
  runId: z.string(),
  key: z.string(),
  mode: z.enum(['points', 'envelope']),
  x: drawn,
  lo: drawn,
  hi: drawn,
  y: drawn,
  logged: z.number().int(),
  nonFinite: z.array(z.object({ step: z.number(), value: jsonMetricSchema })),
  nonFiniteCount: z.number().int(),
});
export type ChartLine = z.infer<typeof chartLine>;

/** A line as the page draws it: its values as arrays, null where a column has none (uPlot's gap). */
export type DrawnLine = Omit<ChartLine, 'x' | 'lo' | 'hi' | 'y'> & {
  x: number[];
  lo: (number | null)[];
  hi: (number | null)[];
  y: (number | null)[];
};

/** Values as a chart message carries them (null as NaN). */
export function toWire(values: readonly (number | null)[]): Float64Array<ArrayBuffer> {
  return Float64Array.from(values, (v) => v ?? NaN);
}

/** A line from a chart message, as the page draws it. */
export function fromWire(line: ChartLine): DrawnLine {
  const nulled = (values: Float64Array) => Array.from(values, (v) => (Number.isNaN(v) ? null : v));
  return { ...line, x: Array.from(line.x), lo: nulled(line.lo), hi: nulled(line.hi), y: nulled(line.y) };
}

/** One thing a compared run was made with differently from the baseline; values already written as text (provenance-text). */
const provenanceDifference = z.object({ path: z.string(), a: z.string(), b: z.string(), diff: z.string().optional() });
export type ProvenanceDifference = z.infer<typeof provenanceDifference>;

/** A compared run against the baseline (the earliest run): its differences, or why they could not be read. */
const provenanceComparison = z.object({
  runId: z.string(),
  /** The run's id (runs of one spec share their name). */
  label: z.string(),
  differences: z.array(provenanceDifference),
  /** Runs without a manifest (older runs): only their spec and reward were compared. */
  notes: z.array(z.string()),
  error: z.string().nullable(),
});
export type ProvenanceComparison = z.infer<typeof provenanceComparison>;

/** A step where what scores a run changed along its chain of resumes (provenance-changes), drawn on the step axis. */
const changePoint = z.object({
  step: z.number(),
  /** diffProvenance's paths that changed (reward.files.<name>, judges.<name>.model, ...). */
  what: z.array(z.string()),
  /** The line `medrl runs show` prints for it (changePointText). */
  text: z.string(),
});
export type DashboardChangePoint = z.infer<typeof changePoint>;

export const toDashboard = z.discriminatedUnion('type', [
  z.object({ type: z.literal('runs'), runs: z.array(dashboardRun) }),
  /** Sent once when several runs are compared: each run against the earliest (the "what changed" strip). */
  z.object({
    type: z.literal('provenance'),
    baselineLabel: z.string(),
    comparisons: z.array(provenanceComparison),
  }),
  /** Sent once per run of the Runs view: where its reward or judges changed, and why the walk stopped short (notes). */
  z.object({ type: z.literal('changePoints'), runId: z.string(), points: z.array(changePoint), notes: z.array(z.string()) }),
  /** A run's metric names and step count, sent when they change (a poll added steps): the page asks its charts again. */
  z.object({
    type: z.literal('metrics'),
    runId: z.string(),
    /** Known from the first step line on (the headline charts pick their keys by it). */
    framework,
    names: z.array(z.string()),
    steps: z.number().int(),
    revision: z.number(),
  }),
  /**
   * How much of a run's log its first read has read, in percent, while that read is under way (a big log takes seconds,
   * and its charts meanwhile show only its first steps): the run's chip says so until its first status.
   */
  z.object({ type: z.literal('loading'), runId: z.string(), percent: z.number().int().min(0).max(100) }),
  /** The answer to a `view`: each line over the range (the lines' whole extent when the page asked for none). */
  z.object({
    type: z.literal('chart'),
    chartId: z.string(),
    seq: z.number().int(),
    range: range.nullable(),
    lines: z.array(chartLine),
    /** Why the lines could not be computed (logged in the host too); the page is never left waiting. */
    error: z.string().nullable(),
  }),
  z.object({
    type: z.literal('status'),
    runId: z.string(),
    framework,
    /** The file metrics are read from (null until the run writes one). */
    source: z.string().nullable(),
    /** Still polled for new steps (false once the run has ended or its file cannot be read). */
    live: z.boolean(),
    error: z.string().nullable(),
    /** Unreadable lines, each with its file and line. */
    problems: z.array(z.string()),
    /** Metrics logged as None (not plotted), one line per metric with its count and steps. */
    notes: z.array(z.string()),
  }),
]);
export type ToDashboard = z.infer<typeof toDashboard>;

export const fromDashboard = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /**
   * A chart's lines over an x range (null: all of it) in `width` pixel columns: sent when a chart is drawn, zoomed, panned,
   * resized or smoothed, and when a run it shows gains steps. `seq` orders the answers (only the newest is drawn).
   */
  z.object({
    type: z.literal('view'),
    chartId: z.string().max(300),
    seq: z.number().int().nonnegative(),
    axis,
    range: range.nullable(),
    width: z.number().int().min(1).max(10_000),
    smoothing: z.number().min(0).max(0.999),
    lines: z.array(lineKey).max(64),
  }),
  /** The shown charts' metrics as CSV (every logged step, raw and smoothed); the host builds it and asks where to save it. */
  z.object({
    type: z.literal('exportCsv'),
    suggestedName: z.string().max(200),
    smoothing: z.number().min(0).max(0.999),
    lines: z.array(lineKey).max(1000),
  }),
]);
export type FromDashboard = z.infer<typeof fromDashboard>;
