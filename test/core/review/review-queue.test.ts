import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { episodeKeyId } from '../../../src/core/review/review-record';
import { sampleQueue, type QueueCandidate } from '../../../src/core/review/review-queue';
import { queueCandidates } from '../../../src/core/review/run-reviews';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { LocalHost } from '../../../src/core/remote/local-host';
import { join } from 'node:path';

// Steps 1 and 2, two data sources, scores 0 / 0.5 / 1 / none: 2 * 2 * 4 = 16 strata, of uneven sizes.
const candidates: QueueCandidate[] = [];
for (const step of [1, 2])
  for (let index = 0; index < 60; index++)
    candidates.push({
      set: 'rollouts',
      step,
      index,
      dataSource: index % 3 === 0 ? 'pubmedqa' : 'medqa',
      score: index % 10 === 9 ? null : [0, 0, 0, 0.5, 1, 1][index % 6]!,
    });
const stratum = (c: QueueCandidate) =>
  `${c.step}|${c.dataSource}|${c.score === null ? 'none' : c.score <= 0 ? 'low' : c.score < 1 ? 'mid' : 'high'}`;
const byId = new Map(candidates.map((c) => [episodeKeyId(c), c]));

describe('the review queue', () => {
  it('is the same for a seed whatever the order of the candidates, with no episode twice', () => {
    const a = sampleQueue(candidates, 40, 7);
    const b = sampleQueue([...candidates].reverse().concat(candidates.slice(0, 5)), 40, 7);
    assert.deepEqual(a, b);
    assert.equal(a.length, 40);
    assert.equal(new Set(a.map(episodeKeyId)).size, 40);
    assert.notDeepEqual(sampleQueue(candidates, 40, 8), a, 'another seed, another queue');
  });

  it('has every stratum once n allows, the rest in proportion to their size', () => {
    const strata = new Map<string, number>();
    for (const c of candidates) strata.set(stratum(c), (strata.get(stratum(c)) ?? 0) + 1);
    const q = sampleQueue(candidates, 40, 1);
    const got = new Map<string, number>();
    for (const k of q) got.set(stratum(byId.get(episodeKeyId(k))!), (got.get(stratum(byId.get(episodeKeyId(k))!)) ?? 0) + 1);
    assert.deepEqual([...got.keys()].sort(), [...strata.keys()].sort(), 'every stratum is there');
    for (const [s, size] of strata) {
      // One each, then (40 - strata) in proportion to (size - 1), rounded by largest remainder: within one of the quota.
      const quota = 1 + ((40 - strata.size) * (size - 1)) / (candidates.length - strata.size);
      assert.ok(Math.abs(got.get(s)! - quota) < 1, `${s}: ${got.get(s)} for a quota of ${quota}`);
    }
  });

  it('fewer places than strata: at most one per stratum; more than there are: all of them; shuffled order', () => {
    const few = sampleQueue(candidates, 5, 3);
    assert.equal(new Set(few.map((k) => stratum(byId.get(episodeKeyId(k))!))).size, 5);
    const all = sampleQueue(candidates, 1000, 3);
    assert.equal(all.length, candidates.length);
    assert.notDeepEqual(all.map(episodeKeyId), candidates.map(episodeKeyId), 'not in step or file order, so the order gives nothing away');
    assert.deepEqual(sampleQueue(candidates, 0, 3), []);
    assert.deepEqual(sampleQueue([], 10, 3), []);
  });
});

describe("a run's episodes as queue candidates", () => {
  it('every episode of a collection, with its step, index, data source and score', async () => {
    const [rollouts] = await discoverEpisodes(new LocalHost(), join(__dirname, '../../fixtures/episodes/verl-run'));
    const all = await queueCandidates(rollouts!);
    assert.equal(all.length, 60);
    assert.deepEqual([...new Set(all.map((c) => c.step))], [1, 2, 3]);
    const ep = await rollouts!.files[1]!.read(4);
    assert.deepEqual(
      all.find((c) => c.step === 2 && c.index === 4),
      {
        set: 'rollouts',
        step: 2,
        index: 4,
        dataSource: ep.dataSource ?? null,
        score: ep.score,
      },
    );
    assert.equal(sampleQueue(all, 12, 1).length, 12);
  });
});
