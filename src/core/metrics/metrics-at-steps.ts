import type { Host } from '../remote/host';
import { readLineBytes } from '../io/line-reader';
import { MetricLogParser } from './metric-log-parser';
import { MetricSeries, type StepRecord } from './metric-series';
import { BlockSpill } from './block-spill';
import { locateRunMetrics, type RunRef } from './run-metrics';
import { MetricsFollower } from './metrics-follower';
import { metricsAtStep } from './headline';

/** Logs smaller than this are parsed whole: a few tens of milliseconds, and exact whatever the order of their steps. */
const SEARCH_FROM_BYTES = 8 << 20;
/** Bytes per read: a few dense verl step lines (a longer line is read on to its end); the bisection stops at this span. */
const PROBE_BYTES = 16 << 10;
/** More steps than this are cheaper to find in one parse of the whole log than by ~log2(size / 16 KB) probes each. */
const MAX_SEARCHED_STEPS = 32;

/**
 * Each step's metrics as the run logged them (a step not logged: the last logged before it), as a parse of the whole
 * log would give them (`metricsAtStep`). A big verl log (console or metrics.jsonl) is not parsed whole: each step is
 * found by bisection over byte offsets, reading 16 KB at a time, so ten 200 MB logs cost a few MB of reads rather than
 * 2 GB (over SSH too). That relies on the log's steps not going down, which holds for one training process and for a
 * job resumed from its latest checkpoint at any step that has a checkpoint (the steps it logs twice come after the
 * checkpoint it resumed from and before any checkpoint the crashed attempt would have written). TRL logs (a dict takes
 * its step from the progress bar around it), trainer_state.json, small logs and many steps are parsed whole.
 */
export async function metricsAtSteps(host: Host, run: RunRef, steps: number[]): Promise<Map<number, StepRecord>> {
  const out = new Map<number, StepRecord>();
  if (steps.length === 0) return out;
  const where = await locateRunMetrics(host, run);
  if (!where) return out;
  const size = where.path.endsWith('.json') ? 0 : (await host.stat(where.path)).size;
  const searched = size >= SEARCH_FROM_BYTES && steps.length <= MAX_SEARCHED_STEPS && where.framework !== 'trl';
  // The lines read, parsed: a few hundred rows, so one 64 KB block per metric, kept out of the process's block budget
  // (where every column's last block is pinned, so churning through it would spill the dashboards' blocks).
  const series = new MetricSeries(new BlockSpill({ budgetBytes: Infinity }));
  const first = searched ? await firstStepAt(host, where.path, 0, size, series) : undefined;
  if (!first || first.framework !== 'verl') {
    // The file already located: a follower of it reads what RunMetrics would, without looking for it again.
    const whole = new MetricsFollower(host, where.path);
    await whole.poll();
    for (const step of steps) {
      const rec = metricsAtStep(whole.series, step);
      if (rec) out.set(step, rec);
    }
    return out;
  }
  // Every probe's answer, for the next steps' bisections: steps are searched in order, each starting where the last ended.
  const probes: Array<{ at: number; start: number; step: number }> = [{ at: 0, ...first }];
  let lo = first.start;
  for (const step of [...steps].sort((a, b) => a - b)) {
    if (step < first.step) continue;
    // The last step line at or before `step` starts in [lo, hi): the first step line from lo is at or before it, the
    // first from hi (if any) is after it.
    let hi = size;
    for (const p of probes) {
      if (p.step <= step) lo = Math.max(lo, p.start);
      else hi = Math.min(hi, p.at);
    }
    hi = Math.max(hi, lo + 1); // a log whose steps went down can leave no span: its line at lo is read
    while (hi - lo > PROBE_BYTES) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const at = await firstStepAt(host, where.path, mid, hi, series);
      if (at) probes.push({ at: mid, start: at.start, step: at.step });
      if (at && at.step <= step) lo = at.start;
      else hi = mid;
    }
    await parseRange(host, where.path, lo, hi, series);
    const rec = metricsAtStep(series, step);
    if (rec) out.set(step, rec);
  }
  return out;
}

/** The first step line that starts in [from, to): its step and offset, and the format the parser took it for. */
async function firstStepAt(
  host: Host,
  path: string,
  from: number,
  to: number,
  series: MetricSeries,
): Promise<{ step: number; start: number; framework: MetricLogParser['framework'] } | undefined> {
  const parser = new MetricLogParser(series);
  for await (const line of linesFrom(host, path, from, to, parser)) {
    const step = parser.feedBytes(line);
    if (step !== undefined) return { step, start: line.start, framework: parser.framework };
  }
  return undefined;
}

/** The step lines that start in [from, to), parsed into `series`. */
async function parseRange(host: Host, path: string, from: number, to: number, series: MetricSeries): Promise<void> {
  const parser = new MetricLogParser(series);
  for await (const line of linesFrom(host, path, from, to, parser)) parser.feedBytes(line);
}

/**
 * The complete lines with a metrics marker that start in [from, to) (a line that crosses `to` is read whole). Reading
 * starts a byte early, so a line starting exactly at `from` is told from the tail of the line before it.
 */
async function* linesFrom(host: Host, path: string, from: number, to: number, parser: MetricLogParser) {
  const start = Math.max(0, from - 1);
  for await (const line of readLineBytes(host, path, { start, end: to, matching: parser.markers(), chunkSize: PROBE_BYTES })) {
    if (line.start < from) continue;
    if (!line.complete) return;
    yield line;
  }
}
