import { headline } from '../metrics/headline';
import type { Framework } from '../metrics/metric-log-parser';

/** How far a run is, from the tail of its output.log: what the runs tree shows next to the state. */
export interface LogProgress {
  step?: number;
  totalSteps?: number;
  /** The headline reward (verl `critic/score/mean`, TRL `reward`) at the last step that logged it. */
  reward?: { key: string; value: number };
}

/**
 * The last training step and the headline reward in a log tail, through the metrics parsers (verl console lines behind
 * Ray prefixes and ANSI colours, TRL log dicts); a tqdm bar `N/M [` (TRL) gives the step and the total.
 */
export function progressFromLog(tail: string, framework?: Framework): LogProgress {
  const h = headline(tail, framework);
  let bar: RegExpMatchArray | undefined;
  for (const m of tail.matchAll(/\s(\d+)\/(\d+) \[/g)) bar = m;
  const out: LogProgress = {};
  // A progress bar counts optimizer steps; TRL dicts without one are only numbered by logging event.
  const step = bar ? Number(bar[1]) : h.lastStep;
  if (step !== undefined) out.step = step;
  if (bar) out.totalSteps = Number(bar[2]);
  const reward = h.metrics.reward;
  if (reward) out.reward = { key: reward.key, value: reward.value };
  return out;
}
