import type { Host } from '../remote/host';
import { errorMessage } from '../errors/located-error';
import { HEADLINES, headlineKey, primaryHeadlines } from '../metrics/headline';
import { metricsAtSteps } from '../metrics/metrics-at-steps';
import type { DiscoveredRun } from './discover-checkpoints';

/**
 * The metric shown beside a checkpoint: the algorithm's headline (GRPO/PPO reward, DPO reward margin, SFT loss; without
 * an algorithm, the first of these the run logged), else its validation score (the metrics feature's keys).
 */
export function headlineMetric(
  metrics: Record<string, number> | undefined,
  framework?: 'verl' | 'trl',
  algorithm?: string,
): { key: string; value: number } | undefined {
  if (!metrics) return undefined;
  const names = Object.keys(metrics);
  for (const id of [...primaryHeadlines(algorithm), 'validation'] as const) {
    const key = headlineKey(
      HEADLINES.find((h) => h.id === id)!,
      names,
      framework,
    );
    if (key) return { key, value: metrics[key]! };
  }
  return undefined;
}

/**
 * Fills each checkpoint's `metrics` with its run's logged metrics at that step (the metrics feature reads metrics.jsonl,
 * output.log or trainer_state.json; a big verl log is searched, not parsed whole). A run whose metrics cannot be read
 * keeps its checkpoints and says why in `problem`.
 */
export async function attachMetrics(host: Host, runs: DiscoveredRun[]): Promise<void> {
  await Promise.all(
    runs
      .filter((r) => r.checkpoints.length)
      .map(async (r) => {
        try {
          const found = await metricsAtSteps(
            host,
            r.run,
            r.checkpoints.map((ck) => ck.step),
          );
          for (const ck of r.checkpoints) {
            const rec = found.get(ck.step);
            if (rec) ck.metrics = rec.metrics;
          }
        } catch (err) {
          r.problem = `${r.problem ? `${r.problem}; ` : ''}${host.name}:${r.run.dir}: metrics: ${errorMessage(err)}`;
        }
      }),
  );
}
