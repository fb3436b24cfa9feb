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

/** RFC 4180 CSV, long format (one row per run, metric and step), so any number of runs and metrics fits one table. */
export function toCsv(rows: readonly CsvRow[]): string {
  const out = ['run,metric,step,elapsed_s,value,smoothed'];
  for (const r of rows) out.push([r.run, r.metric, r.step, r.elapsedSeconds, r.value, r.smoothed].map(cell).join(','));
  return `${out.join('\r\n')}\r\n`;
}
