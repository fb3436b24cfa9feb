import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import { hydraValue, verlTrainer } from '../../../src/core/runs/verl-trainer';
import { makeRunId, RUN_ID_PATTERN } from '../../../src/core/runs/run-id';
import { parseRunListing } from '../../../src/core/runs/list-runs';
import { progressFromLog } from '../../../src/core/runs/log-progress';
import { parseRayStatus } from '../../../src/core/runs/ray-scheduler';
import { renderNewSpec } from '../../../src/core/runs/new-spec';
import { renderSbatchScript } from '../../../src/core/runs/slurm-scheduler';

const configs = join(__dirname, '../../../configs');
const spec = (file: string) => parseRunSpec(readFileSync(join(configs, file), 'utf8'), file).spec!;
const dirs = { home: '/home/u', workdir: '/home/u/work' };
const inputs = (file: string) => ({
  spec: spec(file),
  id: 'r1',
  dir: '/home/u/.medrl/runs/r1',
  dirs,
  rewardFile: '/home/u/.medrl/runs/r1/reward/r.py',
});

describe('launchers', () => {
  it('verl: GRPO with group size, LoRA, custom reward, file logger and outputs in the run folder; overrides last', () => {
    const cmd = verlTrainer.command({ ...inputs('ecg-qa-verl-grpo-lora.yaml'), version: '0.7.0' });
    assert.deepEqual(cmd.argv.slice(0, 3), ['python3', '-m', 'verl.trainer.main_ppo']);
    for (const w of [
      'algorithm.adv_estimator=grpo',
      'data.train_files=/home/u/ecg-qa/data/verl/train.parquet',
      'actor_rollout_ref.rollout.n=5',
      'actor_rollout_ref.model.lora_rank=32',
      'actor_rollout_ref.model.target_modules=all-linear',
      'custom_reward_function.path=/home/u/.medrl/runs/r1/reward/r.py',
      "trainer.logger=['console','file']",
      'trainer.default_local_dir=/home/u/.medrl/runs/r1/checkpoints',
      'trainer.rollout_data_dir=/home/u/.medrl/runs/r1/rollouts',
      'trainer.nnodes=2',
      'trainer.n_gpus_per_node=8',
      'actor_rollout_ref.rollout.load_format=safetensors',
    ]) {
      assert.ok(cmd.argv.includes(w), `${w} in ${cmd.argv.join(' ')}`);
    }
    assert.equal(cmd.env.VERL_FILE_LOGGER_PATH, '/home/u/.medrl/runs/r1/metrics.jsonl');
    assert.equal(hydraValue(['a b', 1, true]), "['a b',1,true]");
  });

  it('Slurm: the spec resources become #SBATCH lines', () => {
    const s = renderSbatchScript({ id: 'r1', dir: '/runs/r1', spec: spec('doctor-trl-sft.yaml'), env: {} });
    assert.match(s, /^#SBATCH --gres=gpu:8$/m);
    assert.match(s, /^#SBATCH --partition=gpu$/m);
    assert.match(s, /^#SBATCH --time=12:00:00$/m);
    assert.match(s, /^exec bash \/runs\/r1\/job\.sh$/m);
  });

  it('run ids are file-name safe and unique per call', () => {
    const now = new Date('2026-01-02T03:04:05Z');
    const id = makeRunId('Diag Agent: GRPO 7B / "run" $(x)', now, 'a1b2c3');
    assert.equal(id, 'diag-agent-grpo-7b-run-x-20260102-030405-a1b2c3');
    assert.match(makeRunId('🩺', now), RUN_ID_PATTERN);
    assert.notEqual(makeRunId('x', now), makeRunId('x', now));
  });

  it('a new run spec from the guided flow is a valid spec', () => {
    const text = renderNewSpec({
      name: 'pubmedqa-grpo',
      framework: 'verl',
      algorithm: 'grpo',
      host: 'local',
      model: 'Qwen/Qwen2.5-0.5B-Instruct',
      train: 'data/pubmedqa/verl/train.parquet',
      reward: { path: 'configs/rewards/multiple_choice_exact.py', function: 'compute_score' },
    });
    const loaded = parseRunSpec(text, 'new.yaml');
    assert.deepEqual(loaded.problems, []);
    assert.equal(loaded.spec?.rollout?.n, 8);
  });
});

describe('run states from the listing', () => {
  const rec = (extra: object) =>
    JSON.stringify({
      id: 'a',
      name: 'a',
      kind: 'train',
      framework: 'verl',
      algorithm: 'grpo',
      host: 'h',
      scheduler: 'ssh',
      created: new Date().toISOString(),
      dir: '/r/a',
      ...extra,
    });
  const state = (lines: string[]) => parseRunListing('h', '/r', lines.join('\n')).runs[0]!;

  it('ssh: alive is running, dead without exit_code is lost, exit codes decide the rest, cancel wins over a kill', () => {
    assert.equal(state(['R a', `J ${rec({ pid: 5 })}`, 'P 5 a', 'A a']).state, 'running');
    assert.equal(state(['R a', `J ${rec({ pid: 5 })}`]).state, 'lost');
    assert.equal(state(['R a', `J ${rec({ pid: 5 })}`, 'X 0']).state, 'succeeded');
    const failed = state(['R a', `J ${rec({ pid: 5 })}`, 'X 137']);
    assert.deepEqual([failed.state, failed.exitCode], ['failed', 137]);
    assert.equal(state(['R a', `J ${rec({ pid: 5 })}`, 'C']).state, 'cancelled');
    assert.equal(state(['R a', `J ${rec({})}`]).state, 'queued');
  });

  it('slurm and ray states come from squeue and ray job status', () => {
    assert.equal(state(['R a', `J ${rec({ scheduler: 'slurm', jobId: '7' })}`, 'Q 7 PENDING a Resources']).state, 'queued');
    assert.equal(state(['R a', `J ${rec({ scheduler: 'slurm', jobId: '7' })}`, 'Q 7 RUNNING a None']).state, 'running');
    assert.equal(state(['R a', `J ${rec({ scheduler: 'slurm', jobId: '7' })}`, 'Q 7 TIMEOUT a None']).reason, 'Slurm TIMEOUT');
    assert.equal(state(['R a', `J ${rec({ scheduler: 'slurm', jobId: '7' })}`, 'Q 7 RUNNING a None', 'Z a 0']).state, 'succeeded');
    assert.equal(
      state([
        'R a',
        `J ${rec({ scheduler: 'ray', jobId: 'a' })}`,
        "Y a Job submission server address: http://127.0.0.1:8265 Status for job 'a': RUNNING",
      ]).state,
      'running',
    );
    assert.equal(parseRayStatus("-------------------\nJob 'x' was stopped"), 'STOPPED');
  });

  it("a job whose start never reached run.json is found: job.sh's own `started` record, or the Slurm job named after the run", () => {
    const ssh = state(['R a', `J ${rec({})}`, 'G 41 41 ', 'A a']);
    assert.deepEqual([ssh.state, ssh.record.pid, ssh.record.pgid], ['running', 41, 41]);
    // A service restarted in its folder: the start job.sh recorded last wins over run.json's.
    assert.equal(state(['R a', `J ${rec({ pid: 5, pgid: 5 })}`, 'G 42 42 ', 'A a']).record.pgid, 42);
    const pending = state(['R a', `J ${rec({ scheduler: 'slurm' })}`, 'Q 9 PENDING a Resources']);
    assert.deepEqual([pending.state, pending.record.jobId], ['queued', '9']);
    assert.equal(state(['R a', `J ${rec({ scheduler: 'slurm' })}`, 'G 3 3 11', 'Q 11 RUNNING a None']).record.jobId, '11');
    const old = new Date(Date.now() - 600_000).toISOString();
    assert.deepEqual(
      [state(['R a', `J ${rec({ created: old })}`]).state, state(['R a', `J ${rec({ created: old })}`]).reason],
      ['failed', 'failed to submit: the submit was interrupted before the job started (nothing ran)'],
    );
    const listing = parseRunListing('h', '/r', 'N swept x-1\nN kept x-2\n');
    assert.deepEqual(
      listing.problems.map((p) => [p.file, p.severity, /removed/.test(p.message), /kept/.test(p.message)]),
      [
        ['/r/x-1', 'warning', true, false],
        ['/r/x-2', 'warning', false, true],
      ],
    );
  });

  it('log tails split per run; the last step is read from verl and tqdm lines', () => {
    const tails = Buffer.from(
      '==> a/output.log <==\nstep:1 - x:1\n(TaskRunner pid=3, ip=1.2.3.4) step:12 - x:2\n\n==> b/output.log <==\n 30%|███       | 3/10 [00:01<00:03,  2.1it/s]',
    ).toString('base64');
    const listing = parseRunListing(
      'h',
      '/r',
      ['R a', `J ${rec({ pid: 1 })}`, 'R b', `J ${rec({ id: 'b', dir: '/r/b' })}`, 'S 50 a/output.log', `T ${tails}`].join('\n'),
    );
    assert.equal(listing.runs.find((r) => r.record.id === 'a')!.progress.step, 12);
    assert.equal(listing.runs.find((r) => r.record.id === 'a')!.logSize, 50);
    assert.deepEqual(listing.runs.find((r) => r.record.id === 'b')!.progress, { step: 3, totalSteps: 10, metrics: [] });
    assert.deepEqual(progressFromLog('\x1b[36m(TaskRunner pid=1, ip=10.0.0.1)\x1b[0m step:7 - critic/score/mean:0.5\n'), {
      step: 7,
      metrics: [{ id: 'reward', title: 'Reward', key: 'critic/score/mean', value: 0.5 }],
    });
    assert.deepEqual(
      progressFromLog("{'loss': 0.01, 'reward': '0.625', 'epoch': 0.1}\n 20%|██        | 4/20 [00:04<00:16,  1.0it/s]\n", 'trl'),
      { step: 4, totalSteps: 20, metrics: [{ id: 'reward', title: 'Reward', key: 'reward', value: 0.625 }] },
    );
    assert.deepEqual(progressFromLog('nothing'), { metrics: [] });
  });
});
