import { headline, HEADLINES, primaryHeadlines, type HeadlineDef } from '../metrics/headline';
import type { Framework } from '../metrics/metric-log-parser';

/** How far a run is, from the tail of its output.log: what the runs tree shows next to the state. */
export interface LogProgress {
  step?: number;
  totalSteps?: number;
  /**
   * The algorithm's headline metrics at the last step that logged them, best first (GRPO/PPO: reward, verl
   * `critic/score/mean` or TRL `reward`; DPO: `rewards/margins`, `rewards/accuracies`; SFT: `loss`,
   * `mean_token_accuracy`). A NaN or infinite value is kept: a diverging loss must be seen.
   */
  metrics: Array<{ id: HeadlineDef['id']; title: string; key: string; value: number }>;
}

/**
 * The last training step and the headline metrics in a log tail, through the metrics parsers (verl console lines behind
 * Ray prefixes and ANSI colours, TRL log dicts). TRL's step and total come from the training bar (transformers' bar
 * without a description, whose total is max_steps), not from whichever tqdm bar came last: "Writing model shards 1/1"
 * after training, "Map", "Loading checkpoint shards" and evaluation bars are not the run's progress.
 */
export function progressFromLog(tail: string, framework?: Framework, algorithm?: string): LogProgress {
  const h = headline(tail, framework);
  const out: LogProgress = { metrics: [] };
  const bar = h.trainingBar;
  // A dict logged after the bar's last drawing (the end-of-training summary) is never past max_steps.
  const step = bar ? Math.max(bar.n, Math.min(h.lastStep ?? 0, bar.total)) : h.lastStep;
  if (step !== undefined) out.step = step;
  if (bar) out.totalSteps = bar.total;
  for (const id of primaryHeadlines(algorithm)) {
    const m = h.metrics[id];
    if (!m) continue;
    out.metrics.push({ id, title: HEADLINES.find((d) => d.id === id)!.title, key: m.key, value: m.value });
    // Without a known algorithm only the first headline the run logged is shown.
    if (!algorithm) break;
  }
  return out;
}
