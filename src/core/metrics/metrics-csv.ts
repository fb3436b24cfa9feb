import { toJsonMetric } from './json-metric';
import type { MetricSeries } from './metric-series';
import type { Float64Column } from './float64-column';

/** One metric of one run to export: its logged steps, with the smoothed values the chart draws (none: the raw ones). */
export interface CsvLine {
  run: string;
  series: MetricSeries;
  key: string;
  smoothed?: Float64Column;
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
export function metricsCsv(lines: readonly CsvLine[]): string {
  const out = ['run,metric,step,elapsed_s,value,smoothed'];
  for (const l of lines) {
    const col = l.series.existingColumn(l.key);
    if (!col) continue;
    const elapsed = l.series.elapsedSeconds();
    const smoothed = l.smoothed ?? col;
    for (let i = 0; i < col.length; i++) {
      if (!col.has(i)) continue;
      const row = [cell(l.run), cell(l.key), cell(l.series.steps[i]!), cell(elapsed[i]!)];
      out.push(`${row.join(',')},${valueCell(col.get(i))},${valueCell(smoothed.get(i))}`);
    }
  }
  return `${out.join('\r\n')}\r\n`;
}
