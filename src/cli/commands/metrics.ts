import { resolve } from 'node:path';
import type { Command } from '../command';
import { printableLines, printError, stdoutPipe, UsageError } from '../command';
import { cliHostPool, openWorkspace } from '../host-pool';
import { openMetricsSource } from '../../core/metrics/run-metrics';
import { HEADLINES, headlineKey } from '../../core/metrics/headline';
import { seriesJsonOutput } from '../../core/metrics/series-json-workers';
import { formatProblem } from '../../core/errors/located-error';
import { LOCAL_HOST } from '../../core/config/workspace-config';

/** A number for a narrow table column: 4 significant digits, exponent form for very small or large values. */
function fmt(v: number | undefined): string {
  if (v === undefined) return '';
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(2) : String(Number(v.toPrecision(4)));
}

/** Table rows written at a time. */
const TABLE_CHUNK_ROWS = 4096;

export const metricsCommand: Command = {
  path: ['metrics'],
  summary: 'Metrics of a run folder or a log (verl console/JSONL, TRL log or trainer_state.json), per step',
  usage: 'medrl metrics FILE_OR_RUN [--host H [--config FILE_OR_DIR]] [--json]',
  details: [
    'FILE_OR_RUN: a run folder (verl: metrics.jsonl, else output.log; TRL: output.log, else the newest',
    'output/checkpoint-*/trainer_state.json) or any metrics file. With --host, the path is on that host of the workspace.',
    '--json prints one JSON object per step, {"step": N, "metrics": {...}}, one per line, in step order; NaN and',
    'infinities (a diverging loss) are the strings "NaN", "Infinity" and "-Infinity" (JSON has no such numbers).',
    'Without --json: a table of the headline metrics (reward, KL, entropy, response length, validation, step time).',
    'Unreadable lines are reported on stderr with their line; the rest is still printed (exit code 1 when there were any).',
    'Metrics logged as None (e.g. grad_norm: None) are not plotted: one note per metric on stderr says how many',
    'and at which steps (the exit code stays 0).',
  ].join('\n'),
  options: { host: { type: 'string' }, config: { type: 'string', short: 'c' } },
  async run(ctx) {
    const [target, ...extra] = ctx.positionals;
    if (!target || extra.length) throw new UsageError('give one file or run folder');
    const hostName = ctx.values.host as string | undefined;
    const pool = hostName ? (await openWorkspace(ctx.cwd, ctx.values.config as string | undefined)).pool : cliHostPool(undefined);
    try {
      const host = await pool.get(hostName ?? LOCAL_HOST);
      const path = hostName ? target : resolve(ctx.cwd, target);
      // A big local log is read by several threads, a byte range each (the whole log is wanted at once).
      const src = await openMetricsSource(host, path, { split: {} });
      await src.poll({ final: true });
      if (!src.source) throw new Error(`${host.name}:${path}: no metrics yet (no metrics.jsonl, output.log or trainer_state.json)`);
      const problems = await src.problems();
      for (const p of problems) printError(ctx, formatProblem(p));
      for (const n of src.notes()) printError(ctx, `${host.name}:${src.source}: note: ${n}`);
      const series = src.series;
      const out = stdoutPipe(ctx);
      if (ctx.json) {
        // Written in chunks with backpressure (by worker threads for a large series): a 1 GB log's steps stream out
        // without piling up in memory. A closed pipe (| head) ends the output; leaving the loop stops the workers.
        for await (const chunk of seriesJsonOutput(series)) if (!(await out.write(chunk))) break;
      } else {
        const names = series.metricNames();
        const cols = HEADLINES.map((d) => ({ title: d.title, key: headlineKey(d, names, src.framework) })).filter(
          (c): c is { title: string; key: string } => c.key !== undefined,
        );
        const widths = cols.map((c) => Math.max(c.title.length, 9));
        const data = cols.map((c) => series.existingColumn(c.key)!);
        let lines = [
          `${host.name}:${src.source} (${src.framework ?? 'unknown framework'}): ${series.length} step(s), ${names.length} metric(s)`,
          ...cols.map((c) => `  ${c.title}: ${c.key}`),
          ['step'.padStart(6), ...cols.map((c, i) => c.title.padStart(widths[i]!))].join('  '),
        ];
        // Written as the rows are made, a few thousand at a time: a 1 GB log's table (500k rows) never sits whole in
        // memory, and a closed pipe (| head) ends it at once.
        for (let r = 0; r < series.length; r++) {
          lines.push([String(series.steps[r]).padStart(6), ...data.map((col, i) => fmt(col.value(r)).padStart(widths[i]!))].join('  '));
          if (lines.length < TABLE_CHUNK_ROWS) continue;
          if (!(await out.write(printableLines(lines)))) break;
          lines = [];
        }
        await out.write(printableLines(lines));
      }
      return problems.length ? 1 : 0;
    } finally {
      await pool.dispose();
    }
  },
};
