import { z } from 'zod';
import { jsonMetricSchema } from '../core/metrics/metric-value';

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

/**
 * Steps added or changed since the last message for a run (MetricSeries.takeChanges): sent incrementally, never the whole
 * series again. `null` where a step did not log the metric.
 */
const seriesChanges = z.object({
  steps: z.array(z.number()),
  observedAt: z.array(z.number().nullable()),
  metrics: z.record(z.string(), z.array(jsonMetricSchema.nullable())),
});

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
  z.object({ type: z.literal('points'), runId: z.string(), changes: seriesChanges }),
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
  /** The visible data as CSV, built by the page (it knows the charts, smoothing and x axis shown); the host asks where to save it. */
  z.object({ type: z.literal('exportCsv'), csv: z.string(), suggestedName: z.string() }),
]);
export type FromDashboard = z.infer<typeof fromDashboard>;
