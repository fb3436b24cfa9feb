import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { ReplaySession, type EpisodeQuery } from '../../../src/core/episodes/replay-session';

const FIX = join(__dirname, '../../fixtures/episodes');

async function session() {
  const s = new ReplaySession(await discoverEpisodes(new LocalHost(), join(FIX, 'verl-run')));
  for (const st of s.steps()) await s.indexStep(st);
  return s;
}

const base: EpisodeQuery = { collection: 'rollouts', step: 2, sort: { column: 'index', desc: false }, offset: 0, count: 100 };

describe('replay session (what the webview asks of the extension)', () => {
  it('filters by score range, data_source, extra key and text; sorts by any column; pages', async () => {
    const s = await session();
    const all = await s.query(base);
    assert.equal(all.total, 20);
    assert.deepEqual(all.dataSources, ['diagagent', 'ecg_qa', 'medec', 'pubmedqa']);
    assert.deepEqual(all.extraKeys.sort(), ['acc', 'format', 'num_turns', 'pred']);
    const ones = await s.query({ ...base, minScore: 1 });
    assert.ok(ones.total > 0 && ones.rows.every((r) => r.score === 1));
    const ecg = await s.query({ ...base, dataSource: 'ecg_qa' });
    assert.deepEqual(
      ecg.rows.map((r) => r.score),
      [0, 0, 0, 0],
    );
    assert.ok(
      ecg.rows.every((r) => r.advantage === 0),
      'a flat group has zero advantages',
    );
    const turns = await s.query({ ...base, extraKey: 'num_turns', extraValue: '3' });
    assert.equal(turns.total, 4);
    const text = await s.query({ ...base, text: 'SUBLINGUAL varices' });
    assert.deepEqual(
      text.rows.map((r) => r.dataSource),
      ['pubmedqa', 'pubmedqa', 'pubmedqa', 'pubmedqa'],
    );
    const byLen = await s.query({ ...base, sort: { column: 'length', desc: true } });
    const lens = byLen.rows.map((r) => r.length);
    assert.deepEqual(
      lens,
      [...lens].sort((a, b) => b - a),
    );
    const byPred = await s.query({ ...base, sort: { column: 'extra:pred', desc: false } });
    const preds = byPred.rows.map((r) => String(r.extra.pred));
    assert.deepEqual(
      preds,
      [...preds].sort((a, b) => a.localeCompare(b)),
    );
    const page = await s.query({ ...base, offset: 15, count: 10 });
    assert.deepEqual(
      page.rows.map((r) => r.index),
      [15, 16, 17, 18, 19],
    );
  });

  it('an episode comes with its group, reward breakdown and flags; the same prompt is found at every step', async () => {
    const s = await session();
    const ep = await s.episode({ collection: 'rollouts', step: 1 }, 3);
    assert.deepEqual(
      ep.flags,
      ['unclosed tag', 'no end-of-turn token'],
      'cut inside <think>, and the kept special tokens end without <|im_end|>',
    );
    assert.equal(ep.group?.size, 4);
    assert.deepEqual(
      ep.group?.members.map((m) => m.index),
      [0, 1, 2, 3],
    );
    assert.equal(ep.extra.num_turns, '3');
    assert.match(ep.location, /rollouts\/1\.jsonl:4$/);
    const cmp = await s.compare({ collection: 'rollouts', step: 1 }, 3);
    assert.deepEqual(
      cmp.steps.map((x) => [x.step, x.episodes.length]),
      [
        [1, 4],
        [2, 4],
        [3, 4],
      ],
    );
    assert.deepEqual(
      cmp.steps.map((x) => x.episodes.filter((e) => e.score === 1).length),
      [1, 2, 3],
      'the diagnosis gets right more often at later steps',
    );
    assert.match(cmp.prompt, /67-year-old woman/);
  });

  it('builds reward playground samples for one episode and for the filtered set', async () => {
    const s = await session();
    const [one] = await s.playgroundSamples({ collection: 'rollouts', step: 3 }, 0);
    assert.equal(one!.data_source, 'diagagent');
    assert.equal(one!.ground_truth, 'Community-acquired pneumonia');
    assert.match(one!.solution_str, /<answer>Community-acquired pneumonia/);
    assert.deepEqual([one!.extra_info.step, one!.extra_info.line], [3, 1]);
    await s.query({ ...base, step: 3, dataSource: 'pubmedqa' });
    const set = await s.playgroundSamples({ collection: 'rollouts', step: 3 }, undefined);
    assert.equal(set.length, 8);
    assert.ok(set.every((x) => x.data_source === 'pubmedqa'));
  });
});
