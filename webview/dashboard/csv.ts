import { toJsonMetric } from '../../src/core/metrics/metric-value';

/** One row of the visible data: a chart's metric for one run at one step. */
export interface CsvRow {
  run: string;
  metric: string;
  step: number;
  elapsedSeconds: number;
  value: number;
  smoothed: number;
}

function cell(v: string | number): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** A logged value: NaN and infinities written as such (the JSON spellings, which pandas and spreadsheets read), never blank. */
function valueCell(v: number): string {
  return String(toJsonMetric(v));
}

/**
 * RFC 4180 CSV, long format (one row per run, metric and step), so any number of runs and metrics fits one table. An
 * unknown elapsed time is blank; a NaN or infinite value or smoothed value is written "NaN", "Infinity", "-Infinity".
 */
export function toCsv(rows: readonly CsvRow[]): string {
  const out = ['run,metric,step,elapsed_s,value,smoothed'];
  for (const r of rows)
    out.push([cell(r.run), cell(r.metric), cell(r.step), cell(r.elapsedSeconds), valueCell(r.value), valueCell(r.smoothed)].join(','));
  return `${out.join('\r\n')}\r\n`;
}
