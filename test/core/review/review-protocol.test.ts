import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VERDICT_NAMES, toWebview, fromWebview } from '../../../src/protocol/review';
import { VERDICTS } from '../../../src/core/review/review-record';

/** The review page is blind by construction: what the protocol lets through is what the page can ever hold. */
describe('the review page protocol', () => {
  const episode = {
    key: { set: 'rollouts', step: 3, index: 7 },
    turns: [{ role: 'assistant', content: '<answer>yes</answer>', parts: [{ kind: 'text', text: '<answer>yes</answer>' }] }],
    groundTruth: 'yes',
    dataSource: 'pubmedqa',
    location: 'local:/runs/r/rollouts/3.jsonl:8',
  };

  it('an item carries no reward, score, advantage, group or reward keys, even if the host put them there', () => {
    const leaky = {
      type: 'item',
      position: 0,
      total: 50,
      done: 0,
      saved: null,
      episode: { ...episode, score: 1, advantage: 0.75, group: { group: 2, size: 4 }, extra: { pred: 'yes', 'judge:gpt': '0.9' } },
      score: 1,
    };
    const parsed = toWebview.parse(leaky);
    const text = JSON.stringify(parsed);
    for (const hidden of ['score', 'advantage', 'group', 'extra', 'pred', 'judge:gpt'])
      assert.ok(!text.includes(`"${hidden}"`), `${hidden} is dropped: ${text}`);
  });

  it('a reveal carries them', () => {
    const parsed = toWebview.parse({
      type: 'reveal',
      position: 0,
      revealed: { key: episode.key, score: 1, advantage: 0.75, group: { group: 2, size: 4, mean: 0.25, std: 0.5 }, extra: { pred: 'yes' } },
    });
    assert.equal(parsed.type === 'reveal' && parsed.revealed.score, 1);
  });

  it("has the core's verdicts (the page cannot import review-record: it hashes with node:crypto)", () => {
    assert.deepEqual([...VERDICT_NAMES], [...VERDICTS]);
  });

  it('refuses a save with a verdict that is not one, or a score outside 1-5', () => {
    const save = { type: 'save', position: 0, verdict: 'correct', scores: { safety: 5 }, note: '' };
    assert.ok(fromWebview.safeParse(save).success);
    assert.ok(!fromWebview.safeParse({ ...save, verdict: 'fine' }).success);
    assert.ok(!fromWebview.safeParse({ ...save, scores: { safety: 6 } }).success);
    assert.ok(!fromWebview.safeParse({ ...save, scores: { safety: 2.5 } }).success);
  });
});
