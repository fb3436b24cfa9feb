import type { RewardSample, ScoreResult } from '../scoring/sample';
import type { JudgeClient, JudgeCallOptions } from './judge-client';
import { parseScore, type ScoreParser } from '../scoring/score-parser';
import { renderTemplate, sampleVariables } from './template';
import { errorMessage } from '../errors/located-error';

/** The prompt a judge gets when medrl.yaml gives none: reference and response, answer as JSON with a 0/1 score. */
export const DEFAULT_JUDGE_PROMPT = [
  'You are a medical expert. Decide whether the response gives the same medical answer as the reference.',
  'Reference: {ground_truth}',
  'Response: {solution_str}',
  'Reply in JSON: {{"score": 1 or 0, "reason": "one sentence"}}',
].join('\n');

export const DEFAULT_JUDGE_PARSER: ScoreParser = { kind: 'json', field: 'score' };
/** DEFAULT_JUDGE_PARSER as medrl.yaml's `parse:` writes it (what a run's provenance records). */
export const DEFAULT_JUDGE_PARSE = 'json:score';

export interface JudgeScorer {
  client: JudgeClient;
  template: string;
  parser: ScoreParser;
}

/** A deadline `ms` from now for a batch of judge calls (JudgeCallOptions.deadline; RunOptions of a judge scorer take it too). */
export function batchDeadline(ms: number): NonNullable<JudgeCallOptions['deadline']> {
  return { at: Date.now() + ms, label: `the batch deadline (${+(ms / 1000).toFixed(1)} s)` };
}

interface JudgeBatchOptions extends JudgeCallOptions {
  onResult?: (r: ScoreResult) => void;
  /** The whole batch ends within this many ms: rows not answered by then get an error naming the deadline. */
  deadlineMs?: number;
}

/**
 * Asks the judge about every sample (as many at once as the judge allows); results arrive as they come, in any order,
 * one per sample, failures included.
 */
export async function judgeSamples(judge: JudgeScorer, samples: RewardSample[], batch: JudgeBatchOptions = {}): Promise<ScoreResult[]> {
  const opts: JudgeBatchOptions = batch.deadlineMs === undefined ? batch : { ...batch, deadline: batchDeadline(batch.deadlineMs) };
  const out: ScoreResult[] = new Array(samples.length);
  await Promise.all(
    samples.map(async (sample, index) => {
      let r: ScoreResult;
      let prompt: string;
      try {
        prompt = renderTemplate(judge.template, sampleVariables(sample));
      } catch (err) {
        r = { index, score: null, detail: null, error: errorMessage(err), latencyMs: 0 };
        out[index] = r;
        opts.onResult?.(r);
        return;
      }
      const call = await judge.client.chat([{ role: 'user', content: prompt }], opts);
      if (call.raw === null) {
        r = {
          index,
          score: null,
          detail: null,
          error: call.error,
          latencyMs: call.latencyMs,
          attempts: call.attempts,
          cached: call.cached,
        };
      } else {
        const parsed = parseScore(call.raw, judge.parser);
        r = {
          index,
          score: parsed.score,
          detail: parsed.detail,
          error: parsed.error,
          raw: call.raw,
          latencyMs: call.latencyMs,
          attempts: call.attempts,
          cached: call.cached,
        };
      }
      out[index] = r;
      opts.onResult?.(r);
    }),
  );
  return out;
}
