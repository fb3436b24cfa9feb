import { z } from 'zod';
import { jsonMetricSchema } from '../core/metrics/metric-value';

/** Messages between the run dashboard webview and the extension host (zod on both sides). */

const framework = z.enum(['verl', 'trl']).nullable();

const dashboardRun = z.object({
  id: z.string(),
  label: z.string(),
  /** `host:path` of the run folder or file, for the legend's tooltip. */
  where: z.string(),
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

export const toDashboard = z.discriminatedUnion('type', [
  z.object({ type: z.literal('runs'), runs: z.array(dashboardRun) }),
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
