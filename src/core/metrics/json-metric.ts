import { z } from 'zod';
import { setMetric } from './metric-value';

/**
 * A metric value as JSON carries it: JSON has no NaN or infinity, so those travel as the strings "NaN", "Infinity" and
 * "-Infinity" (Python's own spellings). One encoding for `medrl metrics --json`, the dashboard messages and CSV export.
 */
export const jsonMetricSchema = z.union([z.number(), z.enum(['NaN', 'Infinity', '-Infinity'])]);
export type JsonMetric = z.infer<typeof jsonMetricSchema>;

export function toJsonMetric(v: number): JsonMetric {
  if (Number.isFinite(v)) return v;
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

export function fromJsonMetric(v: JsonMetric): number {
  return typeof v === 'number' ? v : Number(v);
}

/** A metric record with its values JSON-safe (see JsonMetric). */
export function jsonMetrics(metrics: Record<string, number>): Record<string, JsonMetric> {
  const out: Record<string, JsonMetric> = {};
  for (const k in metrics) setMetric(out, k, toJsonMetric(metrics[k]!));
  return out;
}
