import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detectRewardFunctions } from '../../../src/core/reward/detect-functions';
import { resultsCsv, resultsJsonl } from '../../../src/core/reward/export';

describe('reward function detection (CodeLens placement)', () => {
  it('finds verl and TRL signatures, multi-line and async, and skips helpers', () => {
    const src = [
      'import re',
      'def extract_answer(solution_str):',
      '    return solution_str',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):',
      '    return 1.0',
      'async def judged(',
      '    data_source: str,',
      '    solution_str: str,',
      '    **kwargs,',
      '):',
      '    return 1.0',
      'def accuracy_reward(completions, solution, **kwargs):',
      '    return [1.0]',
      'def _private(prompts, completions):',
      '    return [0]',
    ].join('\n');
    assert.deepEqual(detectRewardFunctions(src), [
      { name: 'compute_score', kind: 'verl', line: 3 },
      { name: 'judged', kind: 'verl', line: 5 },
      { name: 'accuracy_reward', kind: 'trl', line: 11 },
    ]);
  });
});

describe('results export', () => {
  const samples = [{ data_source: 'd', solution_str: 'line one\nsaid "yes", then', ground_truth: { a: 1 }, expected: 1 }];
  const sides = [{ label: 'A', results: [{ index: 0, score: 0.5, detail: null, error: null, raw: 'Score: 0.5', latencyMs: 12.4 }] }];
  it('quotes CSV cells with commas, quotes and newlines', () => {
    assert.equal(
      resultsCsv(samples, sides),
      'index,data_source,solution_str,ground_truth,expected,A score,A error,A raw,A latency_ms\n0,d,"line one\nsaid ""yes"", then","{""a"":1}",1,0.5,,Score: 0.5,12\n',
    );
  });
  it('writes one JSON object per sample with every scorer', () => {
    assert.deepEqual(JSON.parse(resultsJsonl(samples, sides).trim()), {
      index: 0,
      sample: samples[0],
      results: { A: sides[0]!.results[0] },
    });
  });
});
