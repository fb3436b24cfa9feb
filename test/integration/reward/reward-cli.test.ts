import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as runCli } from '../../cli/run-cli';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');

/** The CLI in-process with `env` added to the environment for the call (the judge's API key, as a user's shell has it). */
async function run(argv: string[], cwd: string, env: Record<string, string> = {}) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await runCli(argv, cwd);
  } finally {
    for (const k of Object.keys(env))
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
  }
}

describe('medrl reward / judge CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-reward-cli-'));
  let judge: StandinServer;
  before(async () => {
    judge = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'cli-key']);
    writeFileSync(
      join(dir, 'medrl.yaml'),
      `version: 1\njudges:\n  judge:\n    url: ${judge.url}\n    model: Judger\n    seed: 7\n    parse: json:score\n`,
    );
  });
  after(() => judge.stop());

  it('reward run: one JSON object per sample in input order, from argument-named rows, verl dump lines and response rows; bad lines reported', async () => {
    writeFileSync(
      join(dir, 'samples.jsonl'),
      [
        JSON.stringify({ data_source: 'pubmedqa', solution_str: '<answer>yes</answer>', ground_truth: 'yes' }),
        JSON.stringify({ input: 'Q?', output: '<answer>no</answer>', gts: 'yes', score: 0, step: 3 }),
        '{"broken": ',
        JSON.stringify({ data_source: 'pubmedqa', response: 'Answer: maybe', reward_model: { ground_truth: 'maybe' } }),
        JSON.stringify({ question: 'no solution here' }),
      ].join('\n'),
    );
    const r = await run(
      [
        'reward',
        'run',
        '--fn',
        join(ROOT, 'configs/rewards/multiple_choice_exact.py:compute_score'),
        '--samples',
        'samples.jsonl',
        '--json',
      ],
      dir,
    );
    assert.equal(r.code, 1, 'bad rows make it exit 1');
    const lines = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { index: number; score: number; detail: { pred: string }; error: null });
    assert.deepEqual(
      lines.map((l) => [l.index, l.score, l.detail.pred, l.error]),
      [
        [0, 1, 'yes', null],
        [1, 0, 'no', null],
        // The broken line 3 keeps its place: the sample after it is index 3, as it is the file's fourth row.
        [3, 1, 'maybe', null],
      ],
    );
    assert.match(r.err, /samples\.jsonl:3: error: malformed JSON/);
    assert.match(
      r.err,
      /samples\.jsonl:5: error: no solution: a sample needs solution_str, output \(verl dump\), response or completion \(it has: question\)/,
    );
  });

  it('reward run --judge: the function reaches the judge through MEDRL_JUDGE_* (key from the environment); errors per sample exit 1', async () => {
    writeFileSync(
      join(dir, 'dx.jsonl'),
      [
        JSON.stringify({ data_source: 'dx', solution_str: 'Final diagnosis: septic shock', ground_truth: 'septic shock' }),
        JSON.stringify({ data_source: 'dx', solution_str: 'Final diagnosis: gout [[standin-fault:500]]', ground_truth: 'gout' }),
      ].join('\n'),
    );
    const r = await run(
      [
        'reward',
        'run',
        '--fn',
        join(ROOT, 'configs/rewards/diagnosis_judge.py'),
        '--samples',
        'dx.jsonl',
        '--judge',
        'judge',
        '--concurrency',
        '2',
        '--json',
      ],
      dir,
      { MEDRL_JUDGE_API_KEY: 'cli-key' },
    );
    const lines = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { index: number; score: number | null; error: string | null });
    assert.deepEqual(
      lines.map((l) => [l.index, l.score]),
      [
        [0, 1],
        [1, null],
      ],
    );
    assert.match(lines[1]!.error!, /RuntimeError: judge HTTP 500/);
    assert.equal(r.code, 1);
    const bad = await run(['reward', 'run', '--fn', 'x.txt', '--samples', 'dx.jsonl'], dir);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /"x\.txt" is not a Python file/);
    assert.equal((await run(['reward', 'run', '--samples', 'dx.jsonl'], dir)).code, 2);
  });

  it('judge run: scores with the judge of medrl.yaml, raw answers kept; wrong key reported per sample', async () => {
    writeFileSync(
      join(dir, 'j.jsonl'),
      [
        JSON.stringify({ solution_str: 'pneumonia', ground_truth: 'pneumonia' }),
        JSON.stringify({ solution_str: 'asthma', ground_truth: 'COPD' }),
      ].join('\n'),
    );
    const ok = await run(['judge', 'run', '--samples', 'j.jsonl', '--no-cache', '--json'], dir, { MEDRL_JUDGE_API_KEY: 'cli-key' });
    assert.equal(ok.code, 0, ok.err);
    const lines = ok.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { score: number; raw: string; attempts: number });
    assert.deepEqual(
      lines.map((l) => l.score),
      [1, 0],
    );
    assert.match(lines[0]!.raw, /"score": 1/);
    const noKey = await run(['judge', 'run', '--samples', 'j.jsonl', '--no-cache', '--json'], dir, { MEDRL_JUDGE_API_KEY: 'nope' });
    assert.equal(noKey.code, 1);
    assert.ok(
      noKey.out
        .trim()
        .split('\n')
        .every((l) => /401 Incorrect API key/.test((JSON.parse(l) as { error: string }).error)),
    );
  });

  it("reward cases and backtest: regression cases next to the function; a run's rollouts compared with training scores", async () => {
    const fnDir = join(dir, 'fns');
    mkdirSync(fnDir, { recursive: true });
    writeFileSync(
      join(fnDir, 'strict.py'),
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0 if solution_str.strip() == ground_truth else 0.0\n',
    );
    writeFileSync(
      join(fnDir, 'strict.cases.jsonl'),
      [
        JSON.stringify({ solution_str: 'yes', ground_truth: 'yes', expected: 1 }),
        JSON.stringify({ solution_str: ' no', ground_truth: 'no', expected: 1 }),
        JSON.stringify({ solution_str: 'Yes', ground_truth: 'yes', expected: 1 }),
      ].join('\n'),
    );
    const cases = await run(['reward', 'cases', '--fn', 'fns/strict.py', '--json'], dir);
    assert.equal(cases.code, 1);
    const c = JSON.parse(cases.out) as { passed: number; failed: number; cases: Array<{ pass: boolean; score: number }> };
    assert.deepEqual([c.passed, c.failed, c.cases.map((x) => x.pass)], [2, 1, [true, true, false]]);

    const runDir = join(dir, 'run1');
    mkdirSync(join(runDir, 'rollouts'), { recursive: true });
    const line = (output: string, gts: string, score: number, step: number) =>
      JSON.stringify({ input: 'Q', output, gts, score, step, acc: score });
    writeFileSync(
      join(runDir, 'rollouts', '1.jsonl'),
      [line('yes', 'yes', 1, 1), line('Yes', 'yes', 1, 1), line('no', 'yes', 0, 1)].join('\n') + '\n',
    );
    writeFileSync(
      join(runDir, 'rollouts', '2.jsonl'),
      [line('maybe', 'maybe', 1, 2), '{"input": "Q", "output": "cut', line('No', 'no', 1, 2)].join('\n') + '\n',
    );
    const bt = await run(['reward', 'backtest', '--run', 'run1', '--fn', 'fns/strict.py', '--json'], dir);
    assert.equal(bt.code, 1, 'a dump line that could not be read is a rollout missing from the comparison: never exit 0');
    const report = JSON.parse(bt.out) as {
      skipped: number;
      total: number;
      changed: Array<{ step: number; line: number; training: number; now: number }>;
      agreement: { n: number; agreement: number };
      meanTraining: number;
      meanNew: number;
    };
    assert.equal(report.total, 5);
    assert.equal(report.skipped, 1);
    assert.deepEqual(report.changed.map((x) => [x.step, x.line, x.training, x.now]).sort(), [
      [1, 2, 1, 0],
      [2, 3, 1, 0],
    ]);
    assert.match(
      bt.err,
      /run1\/rollouts\/2\.jsonl:2: error: malformed JSON/,
      'a malformed dump line is reported with its file and line; the others are scored',
    );
    assert.deepEqual([report.agreement.n, report.agreement.agreement, report.meanTraining, report.meanNew], [5, 0.6, 0.8, 0.4]);
    const text = await run(['reward', 'backtest', '--run', 'run1', '--fn', 'fns/strict.py', '--steps', '2'], dir);
    assert.match(
      text.out,
      /2 rollouts, 2 scored, 0 errors, 1 line skipped \(could not be read: listed above\)\nmean score: training 1\.0000, now 0\.5000/,
    );
    assert.equal(text.code, 1);
  });
});
