import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { episodeHash, episodeKeyId, type ReviewRecord, type Verdict } from '../../../src/core/review/review-record';
import { reviewStats, type EpisodeFacts } from '../../../src/core/review/review-stats';

const key = (index: number) => ({ set: 'rollouts', step: 1, index });
const hashOf = (i: number) => episodeHash({ prompt: `prompt ${i}`, response: `response ${i}` });

function review(reviewer: string, index: number, verdict: Verdict, extra: Partial<ReviewRecord> = {}): ReviewRecord {
  return { episode: key(index), hash: hashOf(index), verdict, scores: {}, note: '', reviewer, time: '2026-11-26T10:00:00Z', ...extra };
}

// Four episodes, rewards 1, 0, 1, 0.
const episodes = new Map<string, EpisodeFacts>(
  [1, 0, 1, 0].map((score, i) => [episodeKeyId(key(i)), { hash: hashOf(i), score, dataSource: 'medqa' }]),
);

describe('review stats', () => {
  it("pairs of reviewers, each against the reward and a judge, the latest review winning, Fleiss' with three", () => {
    const reviews = [
      // dr-a passes 0 and 2 (like the reward); an earlier "unsafe" on 0 is replaced
      review('dr-a', 0, 'unsafe'),
      review('dr-a', 0, 'correct'),
      review('dr-a', 1, 'incorrect'),
      review('dr-a', 2, 'correct'),
      review('dr-a', 3, 'partial'),
      // dr-b: T F F T against dr-a's T F T F: at chance
      review('dr-b', 0, 'correct'),
      review('dr-b', 1, 'partial'),
      review('dr-b', 2, 'unsafe'),
      review('dr-b', 3, 'correct'),
      // dr-c reviewed all but episode 3
      review('dr-c', 0, 'correct'),
      review('dr-c', 1, 'incorrect'),
      review('dr-c', 2, 'correct'),
    ];
    // The judge passes everything but episode 3 (no score for episode 1: left out)
    const judge = new Map<string, number | null>([
      [episodeKeyId(key(0)), 0.9],
      [episodeKeyId(key(1)), null],
      [episodeKeyId(key(2)), 0.6],
      [episodeKeyId(key(3)), 0.1],
    ]);
    const s = reviewStats({ reviews, episodes, judges: { j1: judge }, threshold: 0.5 });
    assert.deepEqual(s.reviewers, { 'dr-a': 4, 'dr-b': 4, 'dr-c': 3 });
    const p = (a: string, b: string) => s.pairs.find((x) => x.a === a && x.b === b)!;
    assert.deepEqual(
      s.pairs.map((x) => `${x.a}|${x.b}`),
      [
        'dr-a|dr-b',
        'dr-a|dr-c',
        'dr-b|dr-c',
        'dr-a|reward',
        'dr-a|judge:j1',
        'dr-b|reward',
        'dr-b|judge:j1',
        'dr-c|reward',
        'dr-c|judge:j1',
      ],
    );
    assert.equal(p('dr-a', 'dr-b').kappa, 0);
    assert.deepEqual(p('dr-a', 'dr-b').confusion, { pp: 1, pf: 1, fp: 1, ff: 1 });
    assert.deepEqual(p('dr-a', 'dr-b').disagreements, [key(2), key(3)]);
    assert.deepEqual([p('dr-a', 'reward').n, p('dr-a', 'reward').kappa, p('dr-a', 'reward').agree], [4, 1, 1]);
    // dr-b vs reward: T F F T against T F T F: p_o = .5, p_e = .5: 0
    assert.equal(p('dr-b', 'reward').kappa, 0);
    // dr-a vs judge on episodes 0, 2, 3: T T F against T T F: 1
    assert.deepEqual([p('dr-a', 'judge:j1').n, p('dr-a', 'judge:j1').kappa], [3, 1]);
    // Fleiss over episodes 0, 1, 2 (all three reviewed them): passes 3, 0, 2 of 3
    // P_i = 1, 1, 1/3: P-bar = 7/9; pass share 5/9: P_e = 25/81 + 16/81 = 41/81; kappa = (63/81 - 41/81) / (40/81) = 22/40 = .55
    assert.deepEqual([s.fleiss!.n, s.fleiss!.raters], [3, 3]);
    assert.ok(Math.abs(s.fleiss!.kappa! - 0.55) < 1e-12);
    assert.deepEqual(s.stale, []);
  });

  it('a review of an episode that changed (or is gone) is stale and left out of every kappa', () => {
    const reviews = [
      review('dr-a', 0, 'correct', { hash: hashOf(99) }),
      review('dr-a', 1, 'incorrect'),
      review('dr-a', 7, 'incorrect', { episode: key(7) }),
    ];
    const s = reviewStats({ reviews, episodes, judges: {}, threshold: 0.5 });
    assert.deepEqual(s.reviewers, { 'dr-a': 3 });
    assert.deepEqual(s.stale, [
      { ...key(0), reviewer: 'dr-a' },
      { ...key(7), reviewer: 'dr-a' },
    ]);
    assert.equal(s.pairs.find((x) => x.b === 'reward')!.n, 1);
    assert.equal(s.fleiss, undefined, 'fewer than three reviewers');
  });
});
