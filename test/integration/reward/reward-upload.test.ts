import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { writeDemoDatasets } from '../../../src/core/demo/demo-datasets';
import { LocatedError } from '../../../src/core/errors/located-error';
import { planRun, prepareRun } from '../../../src/core/runs/submit-run';
import { RUN_FILES } from '../../../src/core/runs/run-record';
import { ROOT, adaptExample, makeWorkspace, request, submitRun, waitForState } from '../runs/run-fixture';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

const host = new LocalHost();
const ws = makeWorkspace();
cpSync(join(ROOT, 'configs/rewards'), join(ws.dir, 'configs/rewards'), { recursive: true });
const onDemo = { 'data.train': 'data/pubmedqa/verl/train.parquet', 'data.val': 'data/pubmedqa/verl/test.parquet' };

describe("a run carries its reward function's local imports, and the contract check guards submit (stand-in verl)", () => {
  let judge: StandinServer;
  before(async () => {
    await writeDemoDatasets(host, join(ROOT, 'demo'), ws.dir);
    judge = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'jk']);
  });
  after(() => judge.stop());

  it("ecg_qa_hybrid.py runs with medrl_judge.py and multiple_choice_exact.py uploaded beside it, judged with the run's key", async () => {
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'reward.path': 'configs/rewards/ecg_qa_hybrid.py', ...onDemo });
    const runEnv = { vars: { MEDRL_JUDGE_URL: judge.url, MEDRL_JUDGE_MODEL: 'Judger' }, secrets: { MEDRL_JUDGE_API_KEY: 'jk' } };
    const req = request(ws, host, spec, text, { runEnv });
    const planned = await planRun(req);
    assert.deepEqual(
      planned.problems.filter((p) => /reward/.test(p.message) || p.severity === 'error'),
      [],
    );
    assert.deepEqual(
      Object.keys(planned.run.files)
        .filter((f) => f.startsWith('reward/'))
        .sort(),
      ['reward/ecg_qa_hybrid.py', 'reward/medrl_judge.py', 'reward/multiple_choice_exact.py'],
    );
    const judged = () => judge.log().match(/POST \/v1\/chat\/completions HTTP\/1.1" 200/g)?.length ?? 0;
    const judgedByCheck = judged();
    assert.ok(judgedByCheck > 0, 'the contract check tried the judge path');
    const { record } = await submitRun(req);
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed'], 60_000);
    assert.equal(done.state, 'succeeded', done.logTail.slice(-2000));
    assert.ok(existsSync(join(record.dir, 'reward/medrl_judge.py')));
    const log = readFileSync(join(record.dir, RUN_FILES.log), 'utf8');
    assert.doesNotMatch(log, /Traceback|ModuleNotFoundError/);
    // The stand-in judge answers 401 without the key: the run's calls (after submit's own check made as many again as
    // the plan's) all came with it.
    assert.ok(judged() > 2 * judgedByCheck, `the run called the judge (${judged()} calls, ${judgedByCheck} per check)`);
    assert.doesNotMatch(judge.log(), /HTTP\/1.1" 401/);
  });

  it('a reward verl would crash on is refused before anything is written, naming the data row and the fix', async () => {
    writeFileSync(
      join(ws.dir, 'configs/rewards/returns_none.py'),
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):\n    return 1.0 if solution_str else None\n',
    );
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'reward.path': 'configs/rewards/returns_none.py', ...onDemo });
    const before = readdirSync(ws.runsDir).length;
    await assert.rejects(submitRun(request(ws, host, spec, text)), (err: unknown) => {
      assert.ok(err instanceof LocatedError);
      const p = err.problems.find((x) => x.field === 'row 1');
      assert.ok(p, err.message);
      assert.equal(p.file, join(ws.dir, 'data/pubmedqa/verl/train.parquet'));
      assert.match(p.message, /with an empty answer, the reward function returned None: return a float/);
      return true;
    });
    assert.equal(readdirSync(ws.runsDir).length, before);
  });

  it('refuses a reward.path outside the workspace, naming reward.path', async () => {
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'reward.path': '../.ssh/id_ed25519' });
    await assert.rejects(prepareRun(request(ws, host, spec, text)), (err: unknown) => {
      assert.ok(err instanceof LocatedError);
      assert.deepEqual(
        err.problems.map((p) => [p.field, p.severity]),
        [['reward.path', 'error']],
      );
      assert.match(err.problems[0]!.message, /^\.\.\/\.ssh\/id_ed25519 is outside the workspace/);
      return true;
    });
  });
});
