import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { JsonlEpisodeFile } from '../../../src/core/episodes/episode-file';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RewardRunner } from '../../../src/core/reward/reward-runner';
import { localHarnessPath } from '../../../src/core/reward/staging';
import { ROOT } from './run-fixture';
import { tinyModels, verlCodeMissing } from './verl-code';
import { agentLaunchLine, runAgentLoop, type LaunchLine, type LoopAnswer } from './agent-loop-fixture';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

/**
 * MEDEC self-play (configs/agents/medec_selfplay_loop.py) played by verl's own agent-loop classes on the shipped spec's
 * launch line, on rows of the demo's MEDEC conversion, with a scripted policy playing both roles (verl's rollout server
 * needs a GPU); then scored by the spec's reward (configs/rewards/medec_selfplay_reward.py) against a judge stand-in,
 * and dumped as verl dumps it for the replay.
 */
const SPEC_FILE = join(ROOT, 'configs', 'medec-selfplay-verl.yaml');
const RELEASES = ['v0.7.0', 'v0.8.0', 'v0.9.0', 'main'];

interface Game {
  role: string;
  mode: string;
  attack_valid: number;
  refusal: string;
  sentence_id: number;
  original_sentence: string;
  new_sentence: string;
  assessor_reply: string;
}
type Answer = LoopAnswer<{ medec_game: Game }>;
interface Row {
  prompt: Array<{ role: string; content: string }>;
  data_source: string;
  reward_model: { ground_truth: string };
  extra_info: Record<string, unknown>;
}

/** The demo's MEDEC rows (demo/data/medec/verl, written by `medrl dataset convert`) by MEDEC text id. */
function demoRow(id: string): Row {
  for (const line of readFileSync(join(ROOT, 'demo', 'data', 'medec', 'verl', 'train.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const row = JSON.parse(line) as Row;
    if (row.extra_info.id === id) return row;
  }
  throw new Error(`no ${id} in the demo's MEDEC rows`);
}

// ms-val-1 is a correct note; ms-val-0 is the same case with MEDEC's error in sentence 5 (the organism).
const BENIGN = 'ms-val-1';
const HARMFUL = 'ms-val-0';
const PLANTED = 'One week ago, the patient was diagnosed with a genitourinary infection and started on metronidazole therapy.';
const MISSED = '<answer>0</answer>';
const HIDDEN = 'Culture tests indicate Chlamydia trachomatis.';
const FOUND = '<answer>1</answer>\nSentence: 5\nCorrection: Culture tests indicate Trichomonas vaginalis.';

describe("MEDEC self-play in verl's agent loop (configs/agents/medec_selfplay_loop.py): one policy, both roles", () => {
  let tmp: string;
  let tiny: string;
  let judge: StandinServer;
  const missing = verlCodeMissing();
  const lines = new Map<string, LaunchLine>();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'medrl-medec-'));
    if (!missing) tiny = tinyModels();
    // The judge calls an edit an error unless it only rewords the correct sentence (here: the same words, reordered).
    judge = await startStandinServer(['--served-model-name', 'Judger'], {
      answers: [
        { pattern: 'Correct sentence: (.*)\\nEdited sentence: Infection: (.*)$', reply: 'No' },
        { pattern: 'Correct sentence:', reply: 'Yes' },
      ],
    });
  });
  after(() => judge?.stop());

  async function play(
    source: string,
    id: string,
    seat: { game: string; role: string },
    replies: string[],
    models = tiny,
  ): Promise<{ row: Row; out: Answer }> {
    if (!lines.has(source)) lines.set(source, await agentLaunchLine(SPEC_FILE, source, tmp, tiny));
    const row = demoRow(id);
    const extra_info = { ...row.extra_info, ...seat };
    // verl's trainer hands the agent loop the row's prompt as raw_prompt and its reward keys (_get_gen_batch).
    const sample = { raw_prompt: row.prompt, extra_info, data_source: row.data_source, reward_model: row.reward_model };
    return { row: { ...row, extra_info }, out: runAgentLoop<{ medec_game: Game }>(source, lines.get(source)!, models, sample, replies) };
  }

  /** The spec's reward on a game, with extra_info as verl's reward loop builds it (the row's, plus the loop's extra_fields). */
  async function score(row: Row, out: Answer): Promise<{ score: number; detail: Record<string, unknown> }> {
    const runner = new RewardRunner({
      host: new LocalHost(),
      harnessPath: localHarnessPath(),
      fnPath: join(ROOT, 'configs', 'rewards', 'medec_selfplay_reward.py'),
      env: { MEDRL_JUDGE_URL: judge.url, MEDRL_JUDGE_MODEL: 'Judger' },
      timeoutMs: 20_000,
    });
    try {
      const [scored] = await runner.run([
        {
          data_source: row.data_source,
          solution_str: out.response,
          ground_truth: row.reward_model.ground_truth,
          extra_info: { ...row.extra_info, ...out.extra_fields },
        },
      ]);
      assert.equal(scored!.error, null);
      return { score: scored!.score!, detail: scored!.detail as Record<string, unknown> };
    } finally {
      runner.dispose();
    }
  }

  it('runs on this machine (scripts/setup-verl-check.sh)', () => assert.equal(missing, undefined));

  for (const source of RELEASES) {
    it(`verl ${source}: the attacker plants an error in a correct note, the assessor (the same policy) misses it`, async () => {
      const { out } = await play(source, BENIGN, { game: 'adversarial', role: 'attacker' }, [
        `Sentence: 3\nNew sentence: ${PLANTED}`,
        MISSED,
      ]);
      assert.equal(out.generate_calls, 2, 'the attacker moved, then the assessor answered');
      // The attacker's move is trained (mask 1); the assessor's verdict comes back as the last user turn, masked out.
      assert.deepEqual(
        out.segments.map((s) => [s.mask, s.text.trim()]),
        [
          [1, `Sentence: 3\nNew sentence: ${PLANTED}`],
          [0, `user\nAssessor: ${MISSED}`],
        ],
      );
      assert.match(out.prompt, /^system\nYou are the attacker/);
      assert.match(out.prompt, /The note below is correct\./);
      const game = out.extra_fields.medec_game;
      assert.deepEqual([game.role, game.mode, game.attack_valid, game.sentence_id], ['attacker', 'adversarial_benign', 1, 3]);
      assert.equal(game.new_sentence, PLANTED);
      assert.equal(game.assessor_reply, MISSED);
    });
  }

  it("the assessor reads the note the attacker rewrote (MEDEC's error hidden) in the row's own prompt, and finds it", async () => {
    const { row, out } = await play('v0.9.0', HARMFUL, { game: 'adversarial', role: 'assessor' }, [
      `Sentence: 5\nNew sentence: ${HIDDEN}`,
      FOUND,
    ]);
    assert.equal(out.generate_calls, 2);
    assert.match(out.prompt, /^user\nThe clinical note below has one sentence per line/, "the row's own prompt");
    assert.ok(out.prompt.includes(`\n5 ${HIDDEN}\n`), "the attacker's sentence is in the note");
    assert.ok(!out.prompt.includes('Neisseria gonorrhoeae'), "MEDEC's sentence is gone");
    assert.deepEqual(
      out.segments.map((s) => [s.mask, s.text]),
      [[1, FOUND]],
    );
    assert.equal(out.extra_fields.medec_game.mode, 'adversarial_harmful');
    const scored = await score(row, out);
    // Flag, sentence and MEDEC's correction word for word: the assessor scores 1.
    assert.equal(scored.score, 1);
    assert.deepEqual([scored.detail.game_role, scored.detail.attack_valid, scored.detail.attack_judged], ['assessor', 1, 1]);
  });

  it('the referee refuses a move that changes nothing; the attacker scores -1 and no assessor is played', async () => {
    const { row, out } = await play('v0.9.0', BENIGN, { game: 'adversarial', role: 'attacker' }, [
      'Sentence: 4\nNew sentence: She has no history of major medical illness.',
    ]);
    assert.equal(out.generate_calls, 1);
    assert.deepEqual(
      out.segments.map((s) => s.mask),
      [1, 0],
    );
    assert.equal(out.segments[1]!.text.trim(), 'user\nReferee: move refused: the sentence is unchanged');
    const scored = await score(row, out);
    assert.equal(scored.score, -1);
    assert.equal(scored.detail.attack_valid, 0);
  });

  it("a Qwen3-style template, which drops an earlier reply's <think> block, still gets the assessor's verdict as a masked turn", async () => {
    // The tiny policy's tokenizer with a template that renders an assistant reply without its thinking once a turn
    // follows, as Qwen3's does: the turn cannot be cut from the re-rendered conversation, so it is rendered alone.
    const thinking = join(tmp, 'thinking');
    cpSync(join(tiny, 'policy'), join(thinking, 'policy'), { recursive: true });
    writeFileSync(
      join(thinking, 'policy', 'chat_template.jinja'),
      "{%- for message in messages %}{%- set content = message['content'] %}" +
        "{%- if message['role'] == 'assistant' and not loop.last and '</think>' in content %}" +
        "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}" +
        "{{- '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>' + '\\n' }}{%- endfor %}" +
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
    );
    const move = `<think>Change the drug so it no longer treats the organism.</think>\nSentence: 3\nNew sentence: ${PLANTED}`;
    const { out } = await play('v0.9.0', BENIGN, { game: 'adversarial', role: 'attacker' }, [move, MISSED], thinking);
    assert.deepEqual(
      out.segments.map((s) => [s.mask, s.text.trim()]),
      [
        [1, move],
        [0, `user\nAssessor: ${MISSED}`],
      ],
    );
    assert.equal(out.extra_fields.medec_game.attack_valid, 1, 'the move is read after the thinking');
  });

  it('a vanilla game gives the assessor the note as it is, with one generation', async () => {
    const { row, out } = await play('v0.9.0', HARMFUL, { game: 'vanilla', role: 'assessor' }, [FOUND]);
    assert.equal(out.generate_calls, 1);
    assert.ok(out.prompt.includes('\n5 Culture tests indicate Neisseria gonorrhoeae.\n'));
    assert.equal(out.extra_fields.medec_game.mode, 'vanilla_harmful');
    assert.equal((await score(row, out)).score, 1);
  });

  it("zero-sum rewards, and the replay shows the game's turns by role", async () => {
    const planted = await play('v0.9.0', BENIGN, { game: 'adversarial', role: 'attacker' }, [
      `Sentence: 3\nNew sentence: ${PLANTED}`,
      MISSED,
    ]);
    const won = await score(planted.row, planted.out);
    // The judge calls the edit an error and the assessor said the note was correct: assessor 0, attacker 1.
    assert.equal(won.score, 1);
    assert.deepEqual([won.detail.assessor_score, won.detail.attack_judged, won.detail.game_mode], [0, 1, 'adversarial_benign']);
    // A rewording the judge does not call an error cannot win: the attacker scores -1 even though the assessor said "correct".
    const reworded = await play('v0.9.0', BENIGN, { game: 'adversarial', role: 'attacker' }, [
      'Sentence: 4\nNew sentence: Infection: she has no history of major medical illness.',
      MISSED,
    ]);
    const lost = await score(reworded.row, reworded.out);
    assert.deepEqual([lost.score, lost.detail.attack_valid], [-1, 0]);
    const caught = await play('v0.9.0', HARMFUL, { game: 'adversarial', role: 'assessor' }, [
      `Sentence: 5\nNew sentence: ${HIDDEN}`,
      FOUND,
    ]);
    const assessed = await score(caught.row, caught.out);

    // verl's _dump_generations: input and output decoded with skip_special_tokens=True, score, step, reward extras.
    const dump = join(tmp, 'rollouts', '1.jsonl');
    mkdirSync(dirname(dump), { recursive: true });
    writeFileSync(
      dump,
      [
        { input: planted.out.prompt, output: planted.out.response, score: won.score, step: 1, ...won.detail },
        { input: caught.out.prompt, output: caught.out.response, score: assessed.score, step: 1, ...assessed.detail },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const file = new JsonlEpisodeFile(new LocalHost(), dump, 1);
    const [attacker, assessor] = [await file.read(0), await file.read(1)];
    const label = (t: { role: string; name?: string; environment?: true }) =>
      `${t.role}${t.name ? ` · ${t.name}` : ''}${t.environment ? ' (environment)' : ''}`;
    assert.deepEqual(attacker.turns.map(label), ['system', 'user', 'assistant · attacker', 'user · assessor (environment)']);
    assert.equal(attacker.turns[3]!.content, `Assessor: ${MISSED}`);
    assert.deepEqual(assessor.turns.map(label), ["user · attacker's note", 'assistant · assessor']);
    assert.equal(assessor.turns[1]!.content, FOUND);
  });
});
