import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join, posix } from 'node:path';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import { verlTrainer } from '../../../src/core/runs/verl-trainer';
import { versionAtLeast } from '../../../src/core/runs/trainer';
import { verlRelease } from '../../../src/core/runs/verl-versions';

const ROOT = join(__dirname, '../../..');
const STANDINS = join(ROOT, 'standins');
/** A real reward file: the stand-in imports it, as verl does. */
const REWARD = join(ROOT, 'configs/rewards/multiple_choice_exact.py');
const seed = (file: string) => parseRunSpec(readFileSync(join(ROOT, 'configs', file), 'utf8'), file).spec!;
const dirs = { home: '/home/u', workdir: '/home/u/work' };
const command = (spec: RunSpec, version?: string) =>
  verlTrainer.command({ spec, id: 'r1', dir: '/home/u/.medrl/runs/r1', dirs, rewardFile: REWARD, agentLoopFile: AGENT_LOOP, version });
const AGENT_LOOP = '/home/u/.medrl/runs/r1/agent/exam_simulator_loop.py';
const arg = (argv: string[], key: string) => argv.find((a) => a.startsWith(`${key}=`))?.slice(key.length + 1);
/** A spec like the seeds: single-turn GRPO on 8 GPUs (the MEDEC seed without its game loop), with the given overrides. */
const grpo = (overrides: Record<string, string | number | boolean>, extra: Partial<RunSpec> = {}): RunSpec => {
  const medec = seed('medec-selfplay-verl.yaml');
  const rollout = { ...medec.rollout!, agentLoop: undefined };
  return { ...medec, rollout, resources: { nodes: 1, gpusPerNode: 8 }, overrides, ...extra } as RunSpec;
};

/** verl's own checks, as the stand-in runs them (real python3): the message it would refuse with, or '' when it starts. */
function standinRefusal(argv: string[], env: Record<string, string> = {}): string {
  const code =
    'import sys; from verl.trainer.main_ppo import parse_overrides, validate_config, Run; cfg = parse_overrides(sys.argv[1:]); validate_config(cfg); Run(cfg)';
  const r = spawnSync('python3', ['-c', code, ...argv.slice(3)], {
    cwd: mkdtempSync(join(tmpdir(), 'verl-checks-')),
    env: { ...process.env, PYTHONPATH: STANDINS, ...env },
    encoding: 'utf8',
  });
  return r.status === 0 ? '' : (r.stderr.trim().split('\n').pop() ?? `exit ${r.status}`);
}

describe('verl launch: logger by the version on the host', () => {
  it('the file logger (metrics.jsonl) only from verl 0.6.0; below it, or unknown, console only and no VERL_FILE_LOGGER_PATH', () => {
    const spec = seed('ecg-qa-verl-grpo-lora.yaml');
    for (const v of ['0.6.0', '0.7.1', '0.8.0.dev0']) {
      const cmd = command(spec, v);
      assert.equal(arg(cmd.argv, 'trainer.logger'), "['console','file']", v);
      assert.equal(cmd.env.VERL_FILE_LOGGER_PATH, '/home/u/.medrl/runs/r1/metrics.jsonl', v);
    }
    for (const v of ['0.5.0', '0.4.1.post1', '0.6.0.dev0', '0.6.0rc1', undefined]) {
      const cmd = command(spec, v);
      assert.equal(arg(cmd.argv, 'trainer.logger'), "['console']", String(v));
      assert.equal(cmd.env.VERL_FILE_LOGGER_PATH, undefined, String(v));
    }
  });

  it('the uploaded reward folder goes first on PYTHONPATH: verl loads the file by path, so its own imports need it', () => {
    assert.equal(command(grpo({})).pythonPath, join(ROOT, 'configs/rewards'));
  });

  it('versions compare as PEP 440 releases', () => {
    assert.ok(versionAtLeast('0.10.0', [0, 6, 0]));
    assert.ok(versionAtLeast('0.6.0.post1', [0, 6, 0]));
    assert.ok(!versionAtLeast('0.5.99', [0, 6, 0]));
    assert.ok(!versionAtLeast('unknown', [0, 6, 0]));
  });

  it('W&B: adds the wandb logger, names the project, passes the entity as WANDB_ENTITY', () => {
    const cmd = command({ ...seed('medec-selfplay-verl.yaml'), wandb: { project: 'medec rl', entity: 'lab' } }, '0.7.0');
    assert.equal(arg(cmd.argv, 'trainer.logger'), "['console','file','wandb']");
    assert.equal(arg(cmd.argv, 'trainer.project_name'), "'medec rl'");
    assert.equal(cmd.env.WANDB_ENTITY, 'lab');
    const old = command({ ...seed('medec-selfplay-verl.yaml'), wandb: { project: 'p' } }, '0.5.0');
    assert.equal(arg(old.argv, 'trainer.logger'), "['console','wandb']");
    assert.equal(old.env.WANDB_ENTITY, undefined);
  });

  it('the stand-in refuses the file logger when it is a verl below 0.6, as verl does, and reports its version to the checks', () => {
    const argv = command(seed('local-demo.yaml'), '0.7.0').argv;
    assert.equal(standinRefusal(argv, { MEDRL_STANDIN_VERL_VERSION: '0.5.1' }), 'AssertionError: file is not supported');
    assert.equal(standinRefusal(command(seed('local-demo.yaml'), '0.5.1').argv, { MEDRL_STANDIN_VERL_VERSION: '0.5.1' }), '');
    const v = spawnSync('python3', ['-c', 'from importlib import metadata; print(metadata.version("verl"))'], {
      env: { ...process.env, PYTHONPATH: STANDINS },
      encoding: 'utf8',
    });
    assert.ok(versionAtLeast(v.stdout.trim(), [0, 6, 0]), v.stdout + v.stderr);
  });
});

describe("verl launch: the spec's agent loop (rollout.agentLoop)", () => {
  it("DiagAgent's line runs its exam-simulator loop for every prompt, found through the config MedRL writes and PYTHONPATH", () => {
    const cmd = command(seed('diagnostic-agent-verl-grpo.yaml'), '0.9.0');
    assert.equal(arg(cmd.argv, 'actor_rollout_ref.rollout.agent.agent_loop_config_path'), '/home/u/.medrl/runs/r1/agent/agent_loops.yaml');
    assert.equal(arg(cmd.argv, 'actor_rollout_ref.rollout.agent.default_agent_loop'), 'medrl_agent_loop');
    assert.deepEqual(cmd.files, {
      'agent/agent_loops.yaml': '- name: medrl_agent_loop\n  _target_: exam_simulator_loop.ExamSimulatorAgentLoop\n',
    });
    assert.equal(cmd.pythonPath, `${posix.dirname(REWARD)}:/home/u/.medrl/runs/r1/agent`);
    // No loop, no agent keys.
    assert.equal(
      arg(command(seed('ecg-qa-verl-grpo-lora.yaml'), '0.9.0').argv, 'actor_rollout_ref.rollout.agent.default_agent_loop'),
      undefined,
    );
  });

  it('is refused below verl 0.7 (and on the DiagAgent fork) at rollout.agentLoop; multi-turn with it is not single-turn', () => {
    const spec = seed('diagnostic-agent-verl-grpo.yaml');
    for (const version of ['0.6.1', '0.2.0.dev']) {
      const p = verlTrainer.versionProblems!(version, spec, 'd.yaml').find((x) => x.field === 'rollout.agentLoop');
      assert.match(
        p?.message ?? '',
        /cannot run rollout\.agentLoop: agent loops are written for verl's AgentLoopBase of 0\.7 to main/,
        version,
      );
    }
    for (const version of ['0.7.0', '0.8.0', '0.9.0', '0.10.0.dev'])
      assert.deepEqual(verlTrainer.versionProblems!(version, spec, 'd.yaml'), [], version);
    const multi = { ...spec, overrides: { ...spec.overrides, 'actor_rollout_ref.rollout.multi_turn.enable': true } };
    assert.deepEqual(verlTrainer.versionProblems!('0.9.0', multi, 'd.yaml'), []);
    const { rollout: _r, ...noLoop } = multi;
    assert.match(
      verlTrainer.versionProblems!('0.9.0', { ...noLoop, rollout: { engine: 'vllm' } }, 'd.yaml')[0]?.message ?? '',
      /trains single-turn .*Set rollout\.agentLoop/,
    );
  });
});

describe('verl launch: the batch keys verl requires', () => {
  it('the verl seeds pass verl checks at their own GPU counts: keys filled, nothing refused', () => {
    for (const file of ['diagnostic-agent-verl-grpo.yaml', 'ecg-qa-verl-grpo-lora.yaml', 'medec-selfplay-verl.yaml', 'local-demo.yaml']) {
      const spec = seed(file);
      assert.deepEqual(verlTrainer.problems(spec, file), [], file);
      const argv = command(spec, '0.7.0').argv;
      assert.ok(arg(argv, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'), file);
      assert.ok(arg(argv, 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'), file);
      assert.ok(Number(arg(argv, 'actor_rollout_ref.actor.ppo_mini_batch_size')) <= Number(arg(argv, 'data.train_batch_size')), file);
      assert.equal(standinRefusal(argv), '', file);
    }
    // medec uses a KL loss: the reference policy needs its log-prob micro batch too.
    assert.ok(arg(command(seed('medec-selfplay-verl.yaml')).argv, 'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu'));
    // DiagAgent's own micro batch (2) is kept; its 12k-token sequences get 1 per GPU where we fill.
    const diag = command(seed('diagnostic-agent-verl-grpo.yaml')).argv;
    assert.equal(arg(diag, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'), '2');
    assert.equal(arg(diag, 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'), '1');
  });

  it('the mini batch is capped at the train batch; the overrides still come last and win', () => {
    const argv = command(grpo({ 'data.train_batch_size': 16, 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': 8 })).argv;
    assert.equal(arg(argv, 'actor_rollout_ref.actor.ppo_mini_batch_size'), '16');
    assert.equal(arg(argv, 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'), '8');
    assert.equal(argv.filter((a) => a.startsWith('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=')).length, 1);
  });

  it('what verl would refuse is refused before submit, naming the key to set, and the stand-in refuses the same', () => {
    const cases: [Record<string, string | number | boolean>, string, RegExp][] = [
      [
        { 'data.train_batch_size': 32, 'actor_rollout_ref.actor.ppo_mini_batch_size': 64 },
        'overrides.actor_rollout_ref.actor.ppo_mini_batch_size',
        /train_batch_size \(32\) must be >= actor.ppo_mini_batch_size \(64\)/,
      ],
      [
        { 'data.train_batch_size': 31, 'actor_rollout_ref.rollout.n': 1 },
        'overrides.data.train_batch_size',
        /real_train_batch_size \(31\) must be divisible by minimal possible batch size \(8\)/,
      ],
      [
        { 'data.train_batch_size': 32, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 3 },
        'overrides.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
        /normalized ppo_mini_batch_size 32 should be divisible by ppo_micro_batch_size_per_gpu 3/,
      ],
      [
        { 'data.train_batch_size': 32, 'actor_rollout_ref.rollout.tensor_model_parallel_size': 3 },
        'overrides.actor_rollout_ref.rollout.tensor_model_parallel_size',
        /rollout world_size: 8 is not divisible by infer_tp: 3/,
      ],
      [
        {
          'data.train_batch_size': 32,
          'actor_rollout_ref.rollout.log_prob_micro_batch_size': 16,
          'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': 2,
        },
        'overrides.actor_rollout_ref.rollout.log_prob_micro_batch_size',
        /You have set both/,
      ],
    ];
    for (const [overrides, field, verl] of cases) {
      const spec = grpo(overrides);
      const problems = verlTrainer.problems(spec, 'spec.yaml');
      assert.ok(
        problems.some(
          (p) =>
            p.field === field &&
            p.severity === 'error' &&
            p.file === 'spec.yaml' &&
            (p.message.includes(`set ${field}`) || p.message.includes(`remove ${field}`)),
        ),
        `${field}: ${JSON.stringify(problems)}`,
      );
      assert.match(standinRefusal(command(spec).argv), verl);
    }
  });

  it('PPO: the critic starts from the actor model and gets its micro batch; the stand-in refuses a critic without them', () => {
    const spec = grpo({ 'data.train_batch_size': 32, 'trainer.save_freq': 5 }, { algorithm: 'ppo' });
    const argv = command(spec).argv;
    assert.equal(arg(argv, 'algorithm.adv_estimator'), 'gae');
    assert.equal(arg(argv, 'critic.model.path'), arg(argv, 'actor_rollout_ref.model.path'));
    assert.ok(arg(argv, 'critic.ppo_micro_batch_size_per_gpu'));
    assert.deepEqual(verlTrainer.problems(spec, 'spec.yaml'), []);
    assert.equal(standinRefusal(argv), '');
    assert.match(
      standinRefusal(argv.filter((a) => !a.startsWith('critic.ppo_micro_batch_size_per_gpu='))),
      /\[critic\] Please set at least one of 'critic.ppo_micro_batch_size' or 'critic.ppo_micro_batch_size_per_gpu'/,
    );
    assert.match(standinRefusal(argv.filter((a) => !a.startsWith('critic.model.path='))), /deepseek-llm-7b-chat/);
  });

  it('a GRPO spec without micro batches is refused by the stand-in as verl refuses it', () => {
    const argv = command(grpo({ 'data.train_batch_size': 32 })).argv.filter(
      (a) => !a.startsWith('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu='),
    );
    assert.match(
      standinRefusal(argv),
      /\[actor\] Please set at least one of 'actor.ppo_micro_batch_size' or 'actor.ppo_micro_batch_size_per_gpu'/,
    );
  });
});

describe('verl rules by the host verl version (test/integration/runs/verl-code.test.ts holds them to verl itself)', () => {
  const errors = (spec: RunSpec, version: string) =>
    verlTrainer
      .versionProblems(version, spec, 'spec.yaml')
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.field}: ${p.message}`);
  const base = (o: Record<string, string | number | boolean> = {}, extra: Partial<RunSpec> = {}) =>
    grpo({ 'data.train_batch_size': 64, 'trainer.save_freq': 10, ...o }, extra);

  it('a host verl picks the newest known release at or below it; anything older than 0.4 is the DiagAgent fork', () => {
    assert.equal(verlRelease('0.6.3').source, 'v0.6.1');
    assert.equal(verlRelease('0.7.0.dev').source, 'v0.7.0');
    assert.equal(verlRelease('0.11.2').source, 'main');
    assert.equal(verlRelease('0.10.0.dev0').source, 'main');
    assert.equal(verlRelease('0.2.0.dev').fork, true);
    assert.equal(verlRelease('0.3.1').fork, true);
  });

  it('nothing trains without saving: save_freq unset or <= 0 is refused unless the spec says verl.noCheckpoints', () => {
    const saves = (o: Record<string, string | number | boolean>, extra: Partial<RunSpec> = {}) =>
      verlTrainer
        .problems({ ...grpo({ 'data.train_batch_size': 32, ...o }), ...extra }, 'spec.yaml')
        .filter((p) => p.field === 'overrides.trainer.save_freq');
    assert.match(saves({})[0]!.message, /unset \(verl's default -1\).*never write one/);
    assert.equal(saves({ 'trainer.save_freq': 0 })[0]!.severity, 'error');
    assert.deepEqual(saves({ 'trainer.save_freq': 5 }), []);
    assert.deepEqual(saves({}, { verl: { noCheckpoints: true } }), []);
  });

  it('a key the host verl lacks is refused with the release that has it; the fork is told how its rollout works', () => {
    const mt = base({
      'actor_rollout_ref.rollout.multi_turn.enable': true,
      'actor_rollout_ref.rollout.multi_turn.tool_config_path': '/t.yaml',
    });
    const fork = errors(mt, '0.2.0.dev');
    assert.ok(
      fork.some((e) =>
        /^overrides\.actor_rollout_ref\.rollout\.multi_turn\.enable: .*Could not override 'actor_rollout_ref\.rollout\.multi_turn\.enable'.*exists from verl 0\.4\.1.*always vLLMRolloutWithMultiTurn/.test(
          e,
        ),
      ),
      fork.join('\n'),
    );
    assert.ok(fork.some((e) => /^framework: .*two fixed IP addresses.*forkSimulatorPatched/.test(e)));
    assert.match(errors(mt, '0.4.1').join(), /sync vLLM rollout never reads multi_turn/);
    assert.deepEqual(errors({ ...mt, rollout: { engine: 'sglang', n: 8 } }, '0.4.1'), []);
    const lora = errors(base({}, { lora: { rank: 8 } }), '0.2.0.dev');
    assert.ok(
      lora.some((e) => /^lora: .*lora_rank/.test(e)),
      lora.join('\n'),
    );
  });

  it('multi-turn without its loop: verl 0.4 asserts, the sync vLLM rollout of 0.4-0.6 ignores it, 0.7+ trains single-turn', () => {
    const mt = base({ 'actor_rollout_ref.rollout.multi_turn.enable': true });
    assert.match(errors(mt, '0.4.1').join(), /tool_config_path or interaction_config_path must be set/);
    assert.match(errors(mt, '0.6.1').join(), /sync vLLM rollout never reads multi_turn/);
    assert.match(errors(mt, '0.9.0').join(), /trains single-turn/);
    const tools = base({
      'actor_rollout_ref.rollout.multi_turn.enable': true,
      'actor_rollout_ref.rollout.multi_turn.tool_config_path': '/t.yaml',
    });
    assert.deepEqual(errors(tools, '0.9.0'), []);
  });

  it("the sync vLLM rollout's chunked-prefill limit (fork 10192, 0.4-0.6 8192), zero GPUs except on the stand-in", () => {
    const long = base({ 'data.max_prompt_length': 4096, 'data.max_response_length': 8192 });
    assert.match(errors(long, '0.6.1').join(), /max_num_batched_tokens to at least 12288/);
    assert.deepEqual(errors(long, '0.7.0'), []);
    const mid = base({ 'data.max_prompt_length': 4096, 'data.max_response_length': 6000 });
    assert.match(errors(mid, '0.6.1').join(), /at least 10096/);
    assert.ok(!errors(mid, '0.2.0.dev').some((e) => e.includes('prefill')), 'the fork allows 10192');
    const noGpu = base({}, { resources: { nodes: 1, gpusPerNode: 0 } });
    assert.match(errors(noGpu, '0.7.0').join(), /^resources\.gpusPerNode: .*needs GPUs/);
    assert.deepEqual(errors(noGpu, '0.7.0+medrl.standin'), []);
  });
});
