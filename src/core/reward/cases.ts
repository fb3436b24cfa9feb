import { writeFile } from 'node:fs/promises';
import type { Problem } from '../errors/located-error';
import type { Host } from '../remote/host';
import { loadSamples } from './sample-source';
import type { RewardSample, ScoreResult } from '../scoring/sample';

/** Regression cases of a reward function live next to it: `reward_fn.py` -> `reward_fn.cases.jsonl`. */
export function casesPathFor(fnPath: string): string {
  return fnPath.replace(/\.py$/i, '') + '.cases.jsonl';
}

/** One JSON line per case: the sample in verl's names, plus `expected`. */
export function casesText(samples: RewardSample[]): string {
  return (
    samples
      .filter((s) => typeof s.expected === 'number')
      .map((s) =>
        JSON.stringify({
          data_source: s.data_source,
          solution_str: s.solution_str,
          ground_truth: s.ground_truth,
          extra_info: s.extra_info ?? null,
          ...(s.prompt !== undefined ? { prompt: s.prompt } : {}),
          ...s.extra,
          expected: s.expected,
        }),
      )
      .join('\n') + '\n'
  );
}

export async function saveCases(fnPath: string, samples: RewardSample[]): Promise<{ path: string; count: number }> {
  const path = casesPathFor(fnPath);
  const count = samples.filter((s) => typeof s.expected === 'number').length;
  await writeFile(path, casesText(samples));
  return { path, count };
}

export async function loadCases(host: Host, fnPath: string): Promise<{ path: string; cases: RewardSample[]; problems: Problem[] }> {
  const path = casesPathFor(fnPath);
  const loaded = await loadSamples(host, path);
  const problems = [...loaded.problems];
  const cases: RewardSample[] = [];
  loaded.samples.forEach((s, i) => {
    if (typeof s.expected === 'number') cases.push(s);
    else
      problems.push({
        file: path,
        line: loaded.rows[i],
        field: 'expected',
        severity: 'error',
        message: 'a regression case needs a numeric "expected"',
      });
  });
  return { path, cases, problems };
}

interface CaseOutcome {
  index: number;
  expected: number;
  score: number | null;
  pass: boolean;
  error: string | null;
}

/** A case passes when the score equals the expected one (within `tolerance`). */
export function checkCases(cases: RewardSample[], results: ScoreResult[], tolerance = 1e-6): CaseOutcome[] {
  return cases.map((c, i) => {
    const r = results[i];
    const score = r?.score ?? null;
    return {
      index: i,
      expected: c.expected!,
      score,
      pass: score !== null && Math.abs(score - c.expected!) <= tolerance,
      error: r?.error ?? null,
    };
  });
}
