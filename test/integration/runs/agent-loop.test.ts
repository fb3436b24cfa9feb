import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { JsonlEpisodeFile } from '../../../src/core/episodes/episode-file';
import { convertDataset } from '../../../src/core/datasets/convert-dataset';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RewardRunner } from '../../../src/core/reward/reward-runner';
import { localHarnessPath } from '../../../src/core/reward/staging';
import { ROOT } from './run-fixture';
import { VERL_SOURCES, tinyModels, verlCodeMissing } from './verl-code';
import { agentLaunchLine, runAgentLoop, type LaunchLine, type LoopAnswer as AgentLoopAnswer } from './agent-loop-fixture';
import { startStandinServer, type AnswerRule, type StandinServer } from '../fixtures/openai-standin';

/**
 * DiagAgent's examination dialogue (configs/agents/exam_simulator_loop.py) run by verl's own agent-loop classes on the
 * shipped spec's launch line, against a local exam simulator (the OpenAI-compatible stand-in for DiagGym on vLLM) that
 * answers only prompts built as the seed builds them. The policy is scripted (verl's rollout server needs a GPU): its
 * replies are the seed's format (the fork's examples/diagnose.py INSTRUCTION).
 */
const SPEC_FILE = join(ROOT, 'configs', 'diagnostic-agent-verl-grpo.yaml');
const RELEASES = ['v0.7.0', 'v0.8.0', 'v0.9.0', 'main'];
const SEED_INSTRUCTION = (() => {
  const text = readFileSync(join(VERL_SOURCES, 'versions', 'diagagent-fork', 'examples', 'diagnose.py'), 'utf8');
  return /INSTRUCTION = '''([\s\S]*?)'''/.exec(text)![1]!;
})();
const RECORD = 'Chief complaint: right lower quadrant pain for one day, fever.\n\nFinal Diagnosis:\nAcute appendicitis';
const CBC = 'WBC 15.2 x10^9/L, neutrophils 85%';
const CT = 'Enlarged appendix (11 mm) with periappendiceal fat stranding';
const REPLIES = [
  "Current diagnosis: suspected acute appendicitis\nBased on the patient's initial presentation, the following investigation(s) should be performed: Complete blood count.\nReason: look for leukocytosis",
  "Current diagnosis: acute appendicitis\nBased on the patient's initial presentation, the following investigation(s) should be performed: CT abdomen.\nReason: confirm the appendix is inflamed",
  'The available information is sufficient to make a diagnosis. \n\nDiagnosis: Acute appendicitis\nReason: right lower quadrant pain, leukocytosis and an enlarged appendix on CT',
];
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The simulator's answers, only to the seed's prompt: the record, the earlier results joined by <SEP>, the exam asked. */
function simulatorRules(): AnswerRule[] {
  const context = `${RECORD}\nThe following summarizes the results from the patient's medical examination:\n`;
  const first = 'Exam name:\nComplete blood count\nExam results:\n';
  return [
    { pattern: `^${esc(`${context}${first}`)}$`, reply: `${CBC}<SEP>Exam name:\nleaked next exam` },
    { pattern: `^${esc(`${context}${first}${CBC}<SEP>Exam name:\nCT abdomen\nExam results:\n`)}$`, reply: CT },
    { pattern: '[\\s\\S]', reply: 'UNEXPECTED PROMPT' },
  ];
}

type LoopAnswer = AgentLoopAnswer<{ examination_history: string[]; exam_simulator_errors: number; dialogue_end: string }>;

describe("DiagAgent's examination dialogue in verl's agent loop (configs/agents/exam_simulator_loop.py)", () => {
  let simulator: StandinServer;
  let tmp: string;
  let tiny: string;
  const missing = verlCodeMissing();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'medrl-agent-loop-'));
    simulator = await startStandinServer(['--served-model-name', 'EHRGenerator'], { model: 'DiagGym', answers: simulatorRules() });
    if (!missing) tiny = tinyModels();
  });
  after(() => simulator?.stop());

  const launchLine = async (source: string) => agentLaunchLine(SPEC_FILE, source, tmp, tiny);

  /**
   * The row as `medrl dataset convert` writes it from the seed's data (the fork's diagnose.py fields): the seed's
   * INSTRUCTION as the system prompt, the case summary as the question, and the record and key examinations copied
   * into extra_info, where the loop and the reward read them.
   */
  async function convertedRow(record: string): Promise<{ prompt: unknown[]; extra_info: Record<string, unknown>; data_source: string }> {
    const raw = join(tmp, `diagagent-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      raw,
      JSON.stringify([
        {
          case_summary: 'A 24-year-old man with one day of right lower quadrant pain and fever.',
          final_diagnosis: 'Acute appendicitis',
          text: record,
          key_exam_names: ['Complete blood count', 'CT abdomen'],
        },
      ]),
    );
    const out = await convertDataset(await openDataset(new LocalHost(), raw), {
      mapping: {
        question: 'case_summary',
        answer: 'final_diagnosis',
        system: SEED_INSTRUCTION,
        dataSourceName: 'diagnose_dataset',
        extra: ['text', 'key_exam_names'],
      },
    });
    assert.deepEqual(out.problems, []);
    return out.train[0] as { prompt: unknown[]; extra_info: Record<string, unknown>; data_source: string };
  }

  async function runLoop(source: string, line: LaunchLine, record: string, replies = REPLIES): Promise<LoopAnswer> {
    const row = await convertedRow(record);
    assert.deepEqual(row.extra_info.key_exam_names, ['Complete blood count', 'CT abdomen']);
    // verl's RLHFDataset hands the agent loop the row's prompt as raw_prompt and its other columns as they are.
    return runAgentLoop(source, line, tiny, { raw_prompt: row.prompt, extra_info: row.extra_info, data_source: row.data_source }, replies, {
      MEDRL_EXAM_SIMULATOR_URL: simulator.url,
      MEDRL_EXAM_SIMULATOR_MODEL: 'EHRGenerator',
    });
  }

  it('runs on this machine (scripts/setup-verl-check.sh)', () => assert.equal(missing, undefined));

  for (const source of RELEASES) {
    it(`verl ${source}: the policy asks for two examinations, gets both results from the simulator, and diagnoses`, async () => {
      const out = await runLoop(source, await launchLine(source), RECORD);
      assert.deepEqual(
        out.segments.map((s) => s.mask),
        [1, 0, 1, 0, 1],
        'policy, simulator, policy, simulator, policy',
      );
      // The policy's tokens are its replies; the simulator's turns are the answers the seed's prompts got, as user turns.
      assert.deepEqual(
        out.segments.filter((s) => s.mask === 1).map((s) => s.text),
        REPLIES,
      );
      assert.deepEqual(
        out.segments.filter((s) => s.mask === 0).map((s) => s.text.trim()),
        [`user\nHere is the test result: ${CBC}\nassistant`, `user\nHere is the test result: ${CT}\nassistant`],
      );
      assert.equal(out.generate_calls, 3);
      assert.equal(out.num_turns, 6);
      assert.deepEqual(out.extra_fields.examination_history, ['Complete blood count', 'CT abdomen']);
      assert.equal(out.extra_fields.exam_simulator_errors, 0);
      assert.equal(out.extra_fields.dialogue_end, 'diagnosis');
    });
  }

  it('a simulator that keeps failing ends the episode, counted, and the policy is never handed "None"', async () => {
    const out = await runLoop('v0.9.0', await launchLine('v0.9.0'), `${RECORD}\n[[standin-fault:500]]`);
    assert.equal(out.generate_calls, 1, 'no turn after the failure');
    assert.deepEqual(
      out.segments.map((s) => s.mask),
      [1],
    );
    assert.doesNotMatch(out.response, /None|Here is the test result/);
    assert.equal(out.extra_fields.exam_simulator_errors, 1);
    assert.equal(out.extra_fields.dialogue_end, 'simulator_error');
    assert.deepEqual(out.extra_fields.examination_history, []);
    // The server's log arrives through this process's event loop, which spawnSync held: wait for it.
    const refused = () => simulator.log().match(/POST \/v1\/completions HTTP\/1.1" 500/g)?.length ?? 0;
    for (let i = 0; i < 50 && refused() < 3; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(refused(), 3, 'three tries, then the episode ends');
  });

  it("the episode as verl dumps it: the replay shows each turn, the simulator's marked as the environment's, scored by the seed's reward", async () => {
    const out = await runLoop('v0.9.0', await launchLine('v0.9.0'), RECORD);
    const judge = await startStandinServer(['--served-model-name', 'Judger'], {
      answers: [
        // The seed sends the text after its sentence up to "Reason:", label included.
        { pattern: '\\[pred_diag\\]\\n(?:Diagnosis: )?(.+?)\\n\\n\\[gt_diag\\]\\n\\1$', reply: 'Correct' },
        { pattern: '\\[pred_diag\\]', reply: 'Wrong' },
      ],
    });
    const runner = new RewardRunner({
      host: new LocalHost(),
      harnessPath: localHarnessPath(),
      fnPath: join(ROOT, 'configs', 'rewards', 'diagagent_reward.py'),
      env: { MEDRL_JUDGE_URL: judge.url, MEDRL_JUDGE_MODEL: 'Judger', MEDRL_EXAM_MATCH: 'direct' },
      timeoutMs: 20_000,
    });
    try {
      const [scored] = await runner.run([
        {
          data_source: 'diagnose_dataset',
          solution_str: out.response,
          ground_truth: 'Acute appendicitis',
          extra_info: { key_exam_names: ['Complete blood count', 'CT abdomen'] },
        },
      ]);
      assert.equal(scored!.error, null);
      // 0.1 for the finished dialogue + 1 for the judged diagnosis + 0.5 × F1 1 of the examinations read from the transcript.
      assert.equal(scored!.score, 1.6);
      const dump = join(tmp, 'rollouts', '1.jsonl');
      mkdirSync(dirname(dump), { recursive: true });
      // verl's _dump_generations: input and output decoded with skip_special_tokens=True, score, step, reward extras.
      writeFileSync(
        dump,
        JSON.stringify({ input: out.prompt, output: out.response, score: scored!.score, step: 1, ...scored!.detail }) + '\n',
      );
      const ep = (await new JsonlEpisodeFile(new LocalHost(), dump, 1).first())!;
      assert.deepEqual(
        ep.turns.map((t) => `${t.role}${t.environment ? ' (environment)' : ''}`),
        ['system', 'user', 'assistant', 'user (environment)', 'assistant', 'user (environment)', 'assistant'],
      );
      assert.deepEqual(
        ep.turns.filter((t) => t.environment).map((t) => t.content),
        [`Here is the test result: ${CBC}`, `Here is the test result: ${CT}`],
      );
      assert.equal(ep.turns[6]!.content, REPLIES[2]);
      assert.equal(ep.score, 1.6);
    } finally {
      runner.dispose();
      await judge.stop();
    }
  });
});
