import { discoverEpisodes } from '../episodes/discover';
import { episodeSample } from '../episodes/episode-sample';
import type { Problem } from '../errors/located-error';
import type { Host } from '../remote/host';
import { agreement, type Agreement } from './agreement';
import type { RewardSample, ScoreResult } from '../scoring/sample';

/** A run as the run folder contract gives it. */
export interface RunRef {
  host: string;
  dir: string;
  framework?: 'verl' | 'trl';
}

interface RolloutSamples {
  samples: RewardSample[];
  /** For each sample: its dump file and line. */
  origins: Array<{ file: string; line: number; step: number }>;
  problems: Problem[];
}

/**
 * Reads the rollout dumps of a run (`<dir>/rollouts/{step}.jsonl`), oldest step first, with the episode reader
 * (streamed range reads; a malformed line is a problem with its file and line, the others are still read).
 */
export async function loadRollouts(
  host: Host,
  run: RunRef,
  opts: { steps?: number[]; limit?: number; signal?: AbortSignal } = {},
): Promise<RolloutSamples> {
  const rollouts = (await discoverEpisodes(host, run.dir)).find((c) => c.name === 'rollouts');
  if (!rollouts)
    throw new Error(
      `${host.name}:${run.dir}: no rollout dumps (rollouts/{step}.jsonl): was the run started with trainer.rollout_data_dir?`,
    );
  const hostLabel = host.kind === 'local' ? undefined : host.name;
  const out: RolloutSamples = { samples: [], origins: [], problems: [] };
  const limit = opts.limit ?? Infinity;
  for (const file of rollouts.files) {
    if (out.samples.length >= limit) break;
    if (opts.steps && !opts.steps.includes(file.step)) continue;
    for await (const item of file.stream(opts.signal)) {
      if (out.samples.length >= limit) break;
      if (!('turns' in item)) {
        out.problems.push({ file: item.file, host: hostLabel, line: item.line, severity: 'error', message: item.message });
        continue;
      }
      const sample = episodeSample(item);
      const line = item.location.line ?? 0;
      if (sample.trainingScore === undefined) {
        out.problems.push({
          file: file.path,
          host: hostLabel,
          line,
          field: 'score',
          severity: 'warning',
          message: 'no training score on this line: it is scored but not compared',
        });
      }
      out.samples.push(sample);
      out.origins.push({ file: file.path, line, step: file.step });
    }
  }
  return out;
}

interface BacktestReport {
  total: number;
  scored: number;
  errors: number;
  agreement: Agreement;
  meanTraining: number | null;
  meanNew: number | null;
  /** Samples whose new score differs from the training score by more than `tolerance`, largest change first. */
  changed: Array<{ index: number; step: number; file: string; line: number; training: number; now: number | null; error: string | null }>;
}

function mean(xs: Array<number | null | undefined>): number | null {
  const v = xs.filter((x): x is number => typeof x === 'number');
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

/** Compares the new scores with the ones the samples got in training. */
export function compareWithTraining(
  rollouts: RolloutSamples,
  results: ScoreResult[],
  opts: { threshold?: number; tolerance?: number } = {},
): BacktestReport {
  const tolerance = opts.tolerance ?? 1e-6;
  const training = rollouts.samples.map((s) => s.trainingScore);
  const now = results.map((r) => r.score);
  const changed: BacktestReport['changed'] = [];
  rollouts.samples.forEach((s, i) => {
    const r = results[i];
    if (s.trainingScore === undefined) return;
    if (r?.score === null || r?.score === undefined || Math.abs(r.score - s.trainingScore) > tolerance) {
      const o = rollouts.origins[i]!;
      changed.push({
        index: i,
        step: o.step,
        file: o.file,
        line: o.line,
        training: s.trainingScore,
        now: r?.score ?? null,
        error: r?.error ?? null,
      });
    }
  });
  changed.sort((a, b) => Math.abs((b.now ?? 0) - b.training) - Math.abs((a.now ?? 0) - a.training));
  return {
    total: rollouts.samples.length,
    scored: now.filter((x) => typeof x === 'number').length,
    errors: results.filter((r) => r.error).length,
    agreement: agreement(training, now, opts.threshold ?? 0.5),
    meanTraining: mean(training),
    meanNew: mean(now),
    changed,
  };
}
