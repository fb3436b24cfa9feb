import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readdirSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { FunctionScorer } from '../../../src/core/reward/scorers';
import { checkRewardContract } from '../../../src/core/runs/reward-contract';
import { rewardUpload } from '../../../src/core/runs/reward-files';
import type { RunSpec } from '../../../src/core/runs/run-spec';

const ROOT = join(__dirname, '../../..');

/**
 * The remote path of a reward worker (harness and function copied to ~/.medrl/playground, run in the host's workdir after
 * its setup lines), exercised on a host that reports itself as remote; the real SSH host goes through the same Host calls.
 */
class RemoteLikeHost extends LocalHost {
  override readonly kind = 'ssh' as never;
}

describe('reward worker on a remote host (staging through Host.writeFile)', () => {
  const home = mkdtempSync(join(tmpdir(), 'medrl-remote-home-'));
  const savedHome = process.env.HOME;
  before(() => {
    process.env.HOME = home;
  });
  after(() => {
    process.env.HOME = savedHome;
  });

  it('copies the harness and the function, runs in workdir after setup, and re-copies an edited function', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'medrl-ws-'));
    const workdir = join(home, 'verl');
    mkdirSync(workdir, { recursive: true });
    writeFileSync(join(workdir, 'helpers.py'), 'BONUS = 0.5\n');
    const fn = join(workspace, 'remote_fn.py');
    writeFileSync(
      fn,
      'import os\nfrom helpers import BONUS\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {"score": BONUS, "env": os.environ.get("TRAINING_ENV"), "file": __file__}\n',
    );
    const scorer = new FunctionScorer({
      host: new RemoteLikeHost('gpu'),
      localPath: fn,
      timeoutMs: 5000,
      hostEntry: {
        name: 'gpu',
        kind: 'ssh',
        runsDir: '~/.medrl/runs',
        workdir: '~/verl',
        setup: ['export TRAINING_ENV=verl-env'],
        env: {},
        scheduler: 'ssh',
      },
    });
    try {
      const [r] = await scorer.run([{ data_source: 'd', solution_str: 's', ground_truth: 'g' }]);
      assert.equal(r!.error, null);
      assert.deepEqual([r!.score, r!.detail!.env], [0.5, 'verl-env']);
      assert.match(String(r!.detail!.file), new RegExp(`^${home}/\\.medrl/playground/functions/[0-9a-f]{12}/remote_fn\\.py$`));
      assert.ok(readdirSync(join(home, '.medrl/playground')).some((f) => /^reward_worker-[0-9a-f]{12}\.py$/.test(f)));
      writeFileSync(fn, 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.25\n');
      utimesSync(fn, new Date(), new Date(Date.now() + 2000));
      const [again] = await scorer.run([{ data_source: 'd', solution_str: 's', ground_truth: 'g' }]);
      assert.equal(again!.score, 0.25, 'the edited file was copied and the worker reloaded it');
      assert.ok(existsSync(String(r!.detail!.file)));
    } finally {
      scorer.dispose();
    }
  });

  it('the contract check stages the reward with its imports on the host and reads the rows there, after the setup lines', async () => {
    const workdir = join(home, 'diag');
    mkdirSync(workdir, { recursive: true });
    const data = join(home, 'dx.jsonl');
    const row = (gt: string) => ({
      data_source: 'diag',
      prompt: [{ role: 'user', content: 'case' }],
      reward_model: { ground_truth: gt },
      extra_info: { index: 0 },
    });
    writeFileSync(data, [row('Gout'), row('Sepsis')].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const spec = {
      name: 't',
      framework: 'verl',
      algorithm: 'grpo',
      model: 'm',
      data: { train: data },
      reward: { path: 'configs/rewards/diagnosis_judge.py', function: 'compute_score' },
    } as RunSpec;
    const inputs = {
      host: new RemoteLikeHost('gpu'),
      spec,
      specFile: 'spec.yaml',
      upload: await rewardUpload(ROOT, 'configs/rewards/diagnosis_judge.py', 'spec.yaml'),
      dataPath: data,
      workdir,
      setup: ['export MEDRL_JUDGE_URL=http://127.0.0.1:9/v1 MEDRL_JUDGE_MODEL=J'],
      env: {},
      secrets: {},
    };
    const problems = await checkRewardContract(inputs);
    // medrl_judge.py was staged beside it (else: ModuleNotFoundError); the setup lines ran (else: MEDRL_JUDGE_URL is not
    // set); a judge that does not answer (one the run would start) makes the rows that need it a warning.
    assert.deepEqual(
      problems.map((p) => [p.host, p.file, p.field, p.severity]),
      [['gpu', data, 'row 1', 'warning']],
    );
    assert.match(problems[0]!.message, /calls the judge, which did not answer at check time.*\(also rows 2\)/);
    const staged = readdirSync(join(home, '.medrl/playground/functions')).map((d) =>
      readdirSync(join(home, '.medrl/playground/functions', d)).sort(),
    );
    assert.ok(
      staged.some((files) => files.join() === 'diagnosis_judge.py,medrl_judge.py'),
      JSON.stringify(staged),
    );
  });
});
