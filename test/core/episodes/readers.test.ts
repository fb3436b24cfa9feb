import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { JsonlEpisodeFile, ParquetEpisodeFile } from '../../../src/core/episodes/episode-file';
import { stepSignals, groupStats } from '../../../src/core/episodes/signals';
import type { Episode, MalformedRecord } from '../../../src/core/episodes/episode';
import { writeTrlCompletions } from './trl-fixture';

const FIX = join(__dirname, '../../fixtures/episodes');
const host = new LocalHost();

async function collect(it: AsyncIterable<Episode | MalformedRecord>) {
  const eps: Episode[] = [];
  const bad: MalformedRecord[] = [];
  for await (const x of it) ('turns' in x ? eps : bad).push(x as never);
  return { eps, bad };
}

describe('episode readers', () => {
  it('a verl run folder has rollouts and validation, by step; each step file is indexed with GRPO groups', async () => {
    const cols = await discoverEpisodes(host, join(FIX, 'verl-run'));
    assert.deepEqual(
      cols.map((c) => [c.name, c.files.map((f) => f.step)]),
      [
        ['rollouts', [1, 2, 3]],
        ['validation', [0, 2]],
      ],
    );
    const f = cols[0]!.files[0]!;
    const t = await f.index();
    assert.equal(t.length, 20);
    assert.equal(t.groupCount, 5, 'five prompts, four responses each');
    const g = groupStats(t, 0);
    assert.deepEqual([g.size, g.min, g.max], [4, 0, 1]);
    assert.equal(t.advantageOf(0), 1 - g.mean!, 'advantage sign = score minus the group mean');
    const ep = await f.read(3);
    assert.equal(ep.step, 1);
    assert.equal(ep.groundTruth, 'Community-acquired pneumonia');
    assert.equal(ep.dataSource, 'diagagent');
    assert.deepEqual(
      ep.turns.map((x) => x.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(ep.turns.at(-1)!.parts.at(-1)!.unclosed, true, 'the cut-off episode ends inside <think>');
    assert.deepEqual(Object.keys(ep.extra).sort(), ['acc', 'num_turns', 'pred']);
    assert.equal(ep.location.line, 4);
    const val = await cols[1]!.files[0]!.read(0);
    assert.equal(typeof val.extra.reward, 'number', 'validation dumps keep reward');
  });

  it('a real verl dump (special tokens removed, batch reordered by balance_batch): groups by prompt, not by adjacent lines; clean turns', async () => {
    const f = new JsonlEpisodeFile(host, join(FIX, 'verl-balanced/1.jsonl'), 1);
    const t = await f.index();
    assert.equal(t.groupCount, 3, 'three prompts, not twelve groups of one');
    assert.deepEqual(
      [0, 1, 2].map((g) => t.groupSize(g)),
      [4, 4, 4],
    );
    // The SIADH group: lines 2, 4, 7 and 10 of the file (rows 1, 3, 6, 9), scores 1, 1, 0, 0.
    const siadh = groupStats(t, t.group[1]!);
    assert.deepEqual(siadh.members, [1, 3, 6, 9]);
    assert.deepEqual([siadh.mean, siadh.min, siadh.max], [0.5, 0, 1]);
    assert.equal(t.advantageOf(1), 0.5, "score minus its own group's mean, wherever the group's lines are");
    const s = stepSignals(t);
    assert.deepEqual([s.groups, s.flatGroups], [3, 1], 'the hyperkalaemia group scores all zero');
    const ep = await f.read(0);
    assert.deepEqual(
      ep.turns.map((x) => x.role),
      ['system', 'user', 'assistant'],
    );
    // "user" alone on a line inside the user's message is not a new turn.
    assert.equal(ep.turns[1]!.content, 'Which ECG finding suggests hyperkalaemia?\nuser\n(Note: the user is a student.)');
    assert.deepEqual(
      ep.turns[2]!.parts.map((p) => p.kind),
      ['think', 'text'],
    );
  });

  it('a dump with a uid per sample groups by uid: the same prompt drawn twice in a batch is two groups', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-uid-'));
    const line = (uid: string, score: number) => JSON.stringify({ input: 'user\nQ?\nassistant\n', output: 'A', score, step: 3, uid });
    writeFileSync(join(dir, '3.jsonl'), [line('a', 1), line('b', 0), line('a', 0), line('b', 0)].join('\n') + '\n');
    const t = await new JsonlEpisodeFile(host, join(dir, '3.jsonl'), 3).index();
    assert.equal(t.groupCount, 2);
    assert.deepEqual(groupStats(t, 0).members, [0, 2]);
    assert.equal(stepSignals(t).flatGroups, 1);
  });

  it('signals per step: flat groups, truncated answers by heuristic, score vs length', async () => {
    const [rollouts] = await discoverEpisodes(host, join(FIX, 'verl-run'));
    const s1 = stepSignals(await rollouts!.files[0]!.index());
    assert.equal(s1.unclosed, 1, 'one answer cut inside <think>');
    const s2 = stepSignals(await rollouts!.files[1]!.index());
    assert.ok(s2.flatGroups >= 1, 'the ECG group of step 2 scores all zero');
    assert.equal(s2.flatGroupShare, s2.flatGroups / 5);
    assert.ok(s2.scoreLengthCorrelation !== null && Math.abs(s2.scoreLengthCorrelation) <= 1);
    const tpl = new JsonlEpisodeFile(host, join(FIX, 'templates/4.jsonl'), 4);
    const st = stepSignals(await tpl.index());
    assert.equal(st.empty, 1);
  });

  it('malformed lines are reported with file and line; every other episode is still read', async () => {
    const path = join(FIX, 'malformed/7.jsonl');
    const f = new JsonlEpisodeFile(host, path, 7);
    const t = await f.index();
    assert.equal(t.length, 3);
    assert.deepEqual(
      f.malformed.map((m) => m.line),
      [2, 5, 6, 8],
    );
    assert.match(f.malformed[0]!.message, /malformed JSON/);
    assert.match(f.malformed[1]!.message, /not a JSON object/);
    assert.match(f.malformed[2]!.message, /neither a verl dump record/);
    assert.match(f.malformed[3]!.message, /no newline/);
    assert.equal((await f.read(2)).raw.response, 'A4');
    const { eps, bad } = await collect(f.stream());
    assert.deepEqual(
      eps.map((e) => e.raw.prompt),
      ['Q1', 'Q3', 'Q4'],
    );
    assert.deepEqual(
      bad.map((b) => [b.file, b.line]),
      [
        [path, 2],
        [path, 5],
        [path, 6],
        [path, 8],
      ],
    );
  });

  it('messages trajectories: roles, tool calls with their arguments, tool results, reasoning, ground truth', async () => {
    const [c] = await discoverEpisodes(host, join(FIX, 'trajectories.jsonl'));
    const f = c!.files[0]!;
    await f.index();
    const ep = await f.read(0);
    assert.deepEqual(
      ep.turns.map((t) => t.role),
      ['system', 'user', 'assistant', 'tool', 'assistant'],
    );
    assert.deepEqual(
      ep.turns[2]!.parts.map((p) => p.kind),
      ['think', 'tool_call'],
    );
    assert.match(ep.turns[2]!.parts[1]!.text, /"exam": "abdominal_ultrasound"/);
    assert.equal(ep.turns[3]!.name, 'order_exam');
    assert.equal(ep.score, 1);
    const second = await f.read(1);
    assert.equal(second.score, 0, 'reward is the score when there is no score');
    assert.equal(second.groundTruth, 'acute gallstone pancreatitis');
  });

  it('TRL completions parquet (written with hyparquet-writer) through range reads: rewards, advantage, groups', async () => {
    const out = mkdtempSync(join(tmpdir(), 'medrl-trl-'));
    writeTrlCompletions(join(out, 'output'), [10, 20]);
    const cols = await discoverEpisodes(host, out);
    assert.deepEqual(
      cols.map((c) => [c.name, c.files.map((f) => f.step)]),
      [['completions', [10, 20]]],
    );
    const f = cols[0]!.files[1]! as ParquetEpisodeFile;
    const first = await f.first();
    assert.equal(first?.step, 20);
    const t = await f.index();
    assert.equal(t.length, 8);
    assert.equal(t.groupCount, 2);
    const ep = await f.read(5);
    assert.deepEqual(Object.keys(ep.extra).sort(), ['accuracy_reward', 'format_reward']);
    assert.equal(ep.score, (ep.extra.accuracy_reward as number) + 0.5);
    assert.equal(t.advantageOf(5), ep.advantage, 'TRL advantage is taken from the file');
    // The prompt as TRL wrote it (special tokens removed) reads as clean turns, no role words left in the text.
    assert.deepEqual(
      ep.turns.map((x) => [x.role, x.content]),
      [
        ['user', 'Which ECG finding suggests hyperkalaemia?'],
        ['assistant', ep.raw.response],
      ],
    );
    assert.deepEqual(
      (await f.read(0)).turns.map((x) => x.role),
      ['system', 'user', 'assistant'],
    );
    const hits = await f.search('PEAKED t waves');
    assert.ok(hits.some((h, i) => h === 1 && i >= 4));
    assert.ok(!hits.slice(0, 4).some((h) => h === 1));
  });
});
