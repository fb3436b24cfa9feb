import { MetricSeries, type StepRecord } from './metric-series';
import { MetricLogParser, type Framework } from './metric-log-parser';
import { HEADLINES, headlineKey, primaryHeadlines, type HeadlineDef } from './headline-defs';

export { HEADLINES, headlineKey, primaryHeadlines, type HeadlineDef };

interface Headline {
  /** The last step logged (a training step, or 0 for validation before training). */
  lastStep: number | undefined;
  framework: Framework | undefined;
  /** Each headline the run logged: its metric key and its latest value. */
  metrics: Partial<Record<HeadlineDef['id'], { key: string; value: number; step: number }>>;
  /** TRL: the training progress bar's last drawing (its step and max_steps), when the text showed one. */
  trainingBar?: { n: number; total: number };
}

/** Parses log text (e.g. the tail of a run's output.log; a first partial line is ignored) or takes parsed records. */
function toSeries(input: string | StepRecord[] | MetricSeries): {
  series: MetricSeries;
  framework: Framework | undefined;
  trainingBar?: { n: number; total: number };
} {
  if (input instanceof MetricSeries) return { series: input, framework: undefined };
  if (typeof input !== 'string') {
    const series = new MetricSeries();
    for (const r of input) series.add(r);
    return { series, framework: undefined };
  }
  const parser = new MetricLogParser();
  let start = 0;
  for (const text of input.split('\n')) {
    parser.feed({ text: text.endsWith('\r') ? text.slice(0, -1) : text, start });
    start += Buffer.byteLength(text) + 1;
  }
  parser.flush();
  return { series: parser.series, framework: parser.framework, trainingBar: parser.trainingBar };
}

/**
 * The runs tree's one call: the last step and the latest value of each headline metric, from a log tail (text), parsed
 * records, or a series. `framework` picks the key list (verl `critic/score/mean`, TRL `reward`); without it, it is
 * guessed from the log's format.
 */
export function headline(input: string | StepRecord[] | MetricSeries, framework?: Framework): Headline {
  const { series, framework: detected, trainingBar } = toSeries(input);
  const fw = framework ?? detected;
  const names = series.metricNames();
  const metrics: Headline['metrics'] = {};
  for (const def of HEADLINES) {
    const key = headlineKey(def, names, fw);
    if (!key) continue;
    const pts = series.points(key);
    const last = pts[pts.length - 1];
    if (last) metrics[def.id] = { key, value: last.value, step: last.step };
  }
  return {
    lastStep: series.length ? series.steps[series.length - 1] : undefined,
    framework: fw,
    metrics,
    ...(trainingBar ? { trainingBar } : {}),
  };
}

/** The last step logged, from the same inputs as `headline`. */
export function lastStep(input: string | StepRecord[] | MetricSeries): number | undefined {
  const { series } = toSeries(input);
  return series.length ? series.steps[series.length - 1] : undefined;
}

/**
 * The metrics at a checkpoint's step: the step itself when it was logged, else the last logged step before it (TRL
 * checkpoints need not fall on logging steps). Undefined when nothing was logged up to that step.
 */
export function metricsAtStep(series: MetricSeries, step: number): StepRecord | undefined {
  let i = series.indexOf(step);
  if (i < 0) {
    i = series.steps.findLastIndex((s) => s <= step);
    if (i < 0) return undefined;
  }
  return series.row(i);
}
