import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import { runSpecSchema, type RunSpec } from '../../../src/core/runs/run-spec';
import { TRL_FILES, trlTrainer } from '../../../src/core/runs/trl-trainer';

const ROOT = join(__dirname, '../../..');
const dirs = { home: '/home/u', workdir: '/home/u/work' };
const DIR = '/home/u/.medrl/runs/r1';
const REWARD = `${DIR}/reward/medical_verifier.py`;
const base = { name: 'x', framework: 'trl', host: 'h', model: 'Qwen/Qwen2.5-0.5B', resources: { nodes: 1, gpusPerNode: 2 } };
const make = (o: object): RunSpec => runSpecSchema.parse({ ...base, ...o });
const command = (spec: RunSpec) => trlTrainer.command({ spec, id: 'r1', dir: DIR, dirs, rewardFile: REWARD });
/** The value words after a flag (up to the next --flag); undefined when the flag is absent. */
function flagValues(argv: string[], flag: string): string[] | undefined {
  const i = argv.lastIndexOf(flag);
  if (i < 0) return undefined;
  const end = argv.findIndex((w, j) => j > i && w.startsWith('--'));
  return argv.slice(i + 1, end < 0 ? undefined : end);
}
const shipped = (file: string) => parseRunSpec(readFileSync(join(ROOT, 'configs', file), 'utf8'), file).spec!;

describe('TRL launch (flags from TRL 1.10 and datasets 4.8 sources; these lines ran on an H100)', () => {
  it("a data file goes in a generated --config as TRL's dataset mixture, never as --dataset_name (datasets refuses a file there)", () => {
    const cmd = command(make({ algorithm: 'sft', data: { train: 'data/trl/sft.jsonl' } }));
    assert.deepEqual(cmd.argv.slice(0, 2), ['trl', 'sft']);
    assert.equal(flagValues(cmd.argv, '--dataset_name'), undefined);
    assert.deepEqual(flagValues(cmd.argv, '--config'), [`${DIR}/${TRL_FILES.config}`]);
    // TrlParser reads the file with yaml.safe_load: it is YAML (JSON inside, a comment first).
    assert.deepEqual(parse(cmd.files![TRL_FILES.config]!), {
      datasets: [{ path: 'json', data_files: '/home/u/work/data/trl/sft.jsonl', split: 'train' }],
    });
  });

  it('several entries are one mixture (parquet by its builder, a folder by its path); one folder alone is --dataset_name', () => {
    const mixed = command(make({ algorithm: 'dpo', data: { train: ['/data/pref.parquet', '~/pairs'] } }));
    assert.deepEqual(parse(mixed.files![TRL_FILES.config]!).datasets, [
      { path: 'parquet', data_files: '/data/pref.parquet', split: 'train' },
      { path: '/home/u/pairs', split: 'train' },
    ]);
    const folder = command(make({ algorithm: 'dpo', data: { train: 'data/pairs' } }));
    assert.deepEqual(flagValues(folder.argv, '--dataset_name'), ['/home/u/work/data/pairs']);
    assert.equal(flagValues(folder.argv, '--config'), undefined);
    assert.deepEqual(folder.files, {});
  });

  it("GRPO: a reward function is imported from the uploaded file's folder; a reward model goes to --reward_model_name_or_path", () => {
    const fn = command(
      make({
        algorithm: 'grpo',
        data: { train: 'd.jsonl' },
        reward: { path: 'configs/rewards/medical_verifier.py', function: 'medical_verifier' },
        rollout: { n: 4 },
      }),
    );
    assert.deepEqual(flagValues(fn.argv, '--reward_funcs'), ['medical_verifier.medical_verifier']);
    assert.equal(fn.pythonPath, `${DIR}/reward`);
    assert.deepEqual(flagValues(fn.argv, '--num_generations'), ['4']);
    assert.deepEqual(flagValues(fn.argv, '--log_completions'), ['true']);
    assert.deepEqual(flagValues(fn.argv, '--num_completions_to_print'), ['0'], 'completions go to parquet only, not into output.log');
    const rm = command(make({ algorithm: 'grpo', data: { train: 'd.jsonl' }, reward: { model: '~/models/rm' } }));
    assert.deepEqual(flagValues(rm.argv, '--reward_model_name_or_path'), ['/home/u/models/rm']);
    assert.equal(flagValues(rm.argv, '--reward_funcs'), undefined);
    const sft = command(make({ algorithm: 'sft', data: { train: 'd.jsonl' }, reward: { model: 'org/rm' } }));
    assert.ok(!sft.argv.some((w) => w.startsWith('--reward')), 'trl sft takes no reward flag (it would refuse it)');
  });

  it('W&B only when the spec asks: --report_to wandb with the run id and WANDB_PROJECT/ENTITY; otherwise --report_to none', () => {
    const off = command(make({ algorithm: 'sft', data: { train: 'd.jsonl' } }));
    assert.deepEqual(flagValues(off.argv, '--report_to'), ['none']);
    assert.deepEqual(off.env, {});
    const on = command(make({ algorithm: 'sft', data: { train: 'd.jsonl' }, wandb: { project: 'medrl', entity: 'lab' } }));
    assert.deepEqual([flagValues(on.argv, '--report_to'), flagValues(on.argv, '--run_name')], [['wandb'], ['r1']]);
    assert.deepEqual(on.env, { WANDB_PROJECT: 'medrl', WANDB_ENTITY: 'lab' });
  });

  it('an entry script gets only entry.args and overrides on its command line; model, data, output and reward come as MEDRL_* variables', () => {
    const cmd = command(
      make({
        algorithm: 'ppo',
        data: { train: ['a.json', 'b.json'] },
        reward: { model: 'FreedomIntelligence/medical_o1_verifier_3B' },
        entry: { script: 'scripts/train_rl.py', accelerateConfig: 'configs/zero3.yaml', args: ['--response_length', '1300'] },
        overrides: { kl_coef: 0.03 },
      }),
    );
    assert.deepEqual(cmd.argv, [
      'accelerate',
      'launch',
      '--config_file',
      '/home/u/work/configs/zero3.yaml',
      '--num_processes',
      '2',
      '/home/u/work/scripts/train_rl.py',
      '--response_length',
      '1300',
      '--kl_coef',
      '0.03',
    ]);
    assert.deepEqual(cmd.env, {
      MEDRL_MODEL: 'Qwen/Qwen2.5-0.5B',
      MEDRL_TRAIN_FILES: '/home/u/work/a.json:/home/u/work/b.json',
      MEDRL_OUTPUT_DIR: `${DIR}/output`,
      MEDRL_REWARD_MODEL: 'FreedomIntelligence/medical_o1_verifier_3B',
    });
  });

  it('resuming runs the uploaded python/trl_resume.py in place of `trl`, with the same flags and resume_from_checkpoint', () => {
    const ck = '/home/u/.medrl/runs/r0/output/checkpoint-50';
    const spec = make({
      algorithm: 'grpo',
      data: { train: 'd.jsonl' },
      reward: { model: 'org/rm' },
      overrides: trlTrainer.resumeOverrides(ck),
    });
    const cmd = command(spec);
    assert.deepEqual(cmd.argv.slice(0, 3), ['python3', `${DIR}/${TRL_FILES.resume}`, 'grpo']);
    assert.deepEqual(flagValues(cmd.argv, '--resume_from_checkpoint'), [ck]);
    assert.equal(cmd.files![TRL_FILES.resume], readFileSync(join(ROOT, 'python/trl_resume.py'), 'utf8'));
    assert.deepEqual(cmd.argv.slice(3), command(make({ ...spec, overrides: { resume_from_checkpoint: ck } })).argv.slice(3));
  });

  it('the resume wrapper refuses clearly where TRL has no 1.x CLI (here: no TRL at all)', () => {
    const r = spawnSync('python3', [join(ROOT, 'python/trl_resume.py'), 'sft', '--model_name_or_path', 'm'], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: '' },
    });
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /resuming a TRL run needs TRL 1\.x's CLI \(trl\.cli\.accelerate_launcher; checked on TRL 1\.10\): No module named 'trl'/,
    );
  });

  it('the shipped TRL specs launch with no problem and no data file as --dataset_name', () => {
    for (const file of ['doctor-trl-sft.yaml', 'doctor-trl-grpo.yaml']) {
      const spec = shipped(file);
      assert.deepEqual(trlTrainer.problems(spec, file), [], file);
      const cmd = command(spec);
      assert.equal(flagValues(cmd.argv, '--dataset_name'), undefined, file);
      assert.ok(cmd.files![TRL_FILES.config], file);
    }
    assert.ok(!shipped('doctor-trl-grpo.yaml').model.includes('checkpoint-final'), 'a model path that a run can produce');
  });
});

describe('what real TRL would refuse, found from the spec', () => {
  const problems = (o: object) => trlTrainer.problems(make(o), 'spec.yaml').map((p) => `${p.severity} ${p.field}: ${p.message}`);

  it('a GRPO generation batch that does not hold whole groups, and fewer than 2 generations', () => {
    const [p] = problems({
      algorithm: 'grpo',
      data: { train: 'd.jsonl' },
      reward: { model: 'org/rm' },
      overrides: { per_device_train_batch_size: 3, num_generations: 4 },
    });
    assert.match(
      p!,
      /^error overrides\.per_device_train_batch_size: TRL refuses a generation batch of 6 \(per_device_train_batch_size 3 × 2 processes × 1 steps per generation\) that is not a multiple of num_generations 4/,
    );
    assert.deepEqual(
      problems({
        algorithm: 'grpo',
        data: { train: 'd.jsonl' },
        reward: { model: 'org/rm' },
        overrides: { per_device_train_batch_size: 2 },
        rollout: { n: 4 },
      }),
      [],
    );
    assert.match(
      problems({ algorithm: 'grpo', data: { train: 'd.jsonl' }, reward: { model: 'org/rm' }, rollout: { n: 1 } })[0]!,
      /^error rollout\.n: GRPO needs at least 2 generations/,
    );
  });

  it('a reward file TRL cannot import, a verifier given as a reward model, a reward_funcs value TRL refuses', () => {
    assert.match(
      problems({ algorithm: 'grpo', data: { train: 'd.jsonl' }, reward: { path: 'rewards/my-reward.py', function: 'f' } })[0]!,
      /^error reward\.path: TRL imports the reward file as the Python module "my-reward"/,
    );
    assert.match(
      problems({ algorithm: 'grpo', data: { train: 'd.jsonl' }, reward: { model: 'FreedomIntelligence/medical_o1_verifier_3B' } })[0]!,
      /^warning reward\.model: .*needs a reward function: reward: \{path: configs\/rewards\/medical_verifier\.py/,
    );
    assert.match(
      problems({
        algorithm: 'grpo',
        data: { train: 'd.jsonl' },
        reward: { model: 'org/rm' },
        overrides: { reward_funcs: ['accuracy_reward', 'org/verifier'] },
      })[0]!,
      /^error overrides\.reward_funcs: TRL refuses the reward function "org\/verifier"/,
    );
  });

  it('overrides of what MedRL sets, evaluation without a test split, a non-integer LoRA alpha, accelerate_config for an entry script', () => {
    assert.deepEqual(
      problems({ algorithm: 'sft', data: { train: 'd.jsonl' }, overrides: { output_dir: '/tmp/o', dataset_name: 'x' } }).map(
        (p) => p.split(':')[0],
      ),
      ['error overrides.dataset_name', 'error overrides.output_dir'],
    );
    assert.match(
      problems({ algorithm: 'sft', data: { train: 'd.jsonl' }, overrides: { eval_strategy: 'steps' } })[0]!,
      /set overrides\.test_split_size/,
    );
    assert.deepEqual(
      problems({ algorithm: 'sft', data: { train: 'd.jsonl' }, overrides: { eval_strategy: 'steps', test_split_size: 0.1 } }),
      [],
    );
    assert.match(
      problems({ algorithm: 'sft', data: { train: 'd.jsonl' }, lora: { rank: 8, alpha: 16.5 } })[0]!,
      /^error lora\.alpha: TRL's lora_alpha is an integer/,
    );
    assert.match(
      problems({ algorithm: 'sft', data: { train: 'd.jsonl' }, entry: { script: 't.py' }, overrides: { accelerate_config: 'zero3' } })[0]!,
      /^error overrides\.accelerate_config: .*set entry\.accelerateConfig/,
    );
    assert.match(
      problems({
        algorithm: 'sft',
        data: { train: 'd.jsonl' },
        entry: { script: 't.py' },
        overrides: { resume_from_checkpoint: '/r/checkpoint-5' },
      })[0]!,
      /^warning overrides\.resume_from_checkpoint: .*trainer\.train\(resume_from_checkpoint=/,
    );
  });
  it('a TRL older than the one its flags were checked on is a warning before submit; 1.10 builds are not', () => {
    assert.deepEqual(trlTrainer.versionProblems('1.10.0.dev0', make({ algorithm: 'sft', data: { train: 'd.jsonl' } }), 'spec.yaml'), []);
    assert.deepEqual(trlTrainer.versionProblems('1.11.2', make({ algorithm: 'sft', data: { train: 'd.jsonl' } }), 'spec.yaml'), []);
    const old = trlTrainer.versionProblems('0.19.1', make({ algorithm: 'sft', data: { train: 'd.jsonl' } }), 'spec.yaml');
    assert.deepEqual(
      old.map((p) => [p.field, p.severity]),
      [['framework', 'warning']],
    );
    assert.match(old[0]!.message, /TRL 0\.19\.1.*checked against TRL 1\.10/);
  });
});
