import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import { runSpecSchema } from '../../../src/core/runs/run-spec';
import { renderLaunchScript } from '../../../src/core/runs/launch-script';
import { renderSbatchScript, slurmScheduler, NODE_ENV_SCRIPT, NODE_SCRIPT } from '../../../src/core/runs/slurm-scheduler';
import { rayScheduler, RAY_RUNTIME_ENV } from '../../../src/core/runs/ray-scheduler';
import { environmentSecrets, resolveRunEnv, type RunEnvRequest } from '../../../src/core/submit/run-environment';
import { sha256 } from '../../../src/core/runs/provenance';
import { DEFAULT_JUDGE_PROMPT } from '../../../src/core/judge/judge-scorer';
import { serviceLaunchesOfSpec, serviceScript } from '../../../src/core/services/service-command';
import type { HostPool } from '../../../src/core/remote/host-pool';

const base = { name: 'r', model: 'Qwen/Qwen2.5-0.5B', data: { train: 'd' } };
const spec = (s: Record<string, unknown>): RunSpec => runSpecSchema.parse({ ...base, ...s });
const noPool = {
  get: () => {
    throw new Error('no host is contacted for judges and tokens');
  },
} as unknown as HostPool;
const config = {
  judges: { qwen72: { url: 'http://127.0.0.1:8082/v1/', model: 'Judger' } },
  defaults: { host: 'local', scheduler: 'ssh' as const },
};
const req = (s: RunSpec, env: NodeJS.ProcessEnv, run: RunEnvRequest['run'] = { host: 'local', scheduler: 'ssh' }): RunEnvRequest => ({
  spec: s,
  specFile: 'configs/x.yaml',
  config,
  hosts: [],
  pool: noPool,
  run,
  secrets: environmentSecrets(env),
});

describe('the run environment (one core path for medrl submit and the extension)', () => {
  it('the judge URL and model are variables, its key, HF_TOKEN and WANDB_API_KEY are secrets from the shell', async () => {
    const e = await resolveRunEnv(
      req(spec({ framework: 'trl', algorithm: 'sft', wandb: { project: 'p' } }), {
        MEDRL_JUDGE_API_KEY: 'jk',
        HF_TOKEN: 'hf_x',
        WANDB_API_KEY: 'wb',
        PATH: '/bin',
      }),
    );
    assert.deepEqual(e.vars, { MEDRL_JUDGE_URL: 'http://127.0.0.1:8082/v1', MEDRL_JUDGE_MODEL: 'Judger' });
    assert.deepEqual(e.secrets, { MEDRL_JUDGE_API_KEY: 'jk', HF_TOKEN: 'hf_x', WANDB_API_KEY: 'wb' });
    assert.deepEqual(e.problems, []);
  });

  it('a judge used as a named service gets that name; W&B without a key refuses at the wandb field; no key is a warning', async () => {
    const s = spec({
      framework: 'verl',
      algorithm: 'grpo',
      reward: { path: 'r.py' },
      wandb: { project: 'p' },
      services: { patient: { model: 'x', judge: 'qwen72' } },
    });
    const e = await resolveRunEnv(req(s, { MEDRL_PATIENT_API_KEY: 'pk' }));
    assert.equal(e.vars.MEDRL_PATIENT_URL, 'http://127.0.0.1:8082/v1');
    assert.equal(e.secrets.MEDRL_PATIENT_API_KEY, 'pk');
    // What provenance.json records of the judge: where and how it scores, never its key.
    assert.deepEqual(e.uses?.judges.patient, {
      judge: 'qwen72',
      host: null,
      model: 'Judger',
      url: 'http://127.0.0.1:8082/v1',
      promptSha256: sha256(DEFAULT_JUDGE_PROMPT),
      parser: 'json:score',
      temperature: null,
      seed: null,
      maxTokens: null,
    });
    assert.deepEqual(Object.keys(e.uses?.judges ?? {}), ['patient', 'judge']);
    assert.equal(e.secrets.WANDB_API_KEY, undefined);
    const wandb = e.problems!.find((p) => p.field === 'wandb')!;
    assert.equal(wandb.severity, 'error');
    assert.match(wandb.message, /no W&B API key: export WANDB_API_KEY in the shell that runs medrl/);
    // MEDRL_JUDGE_* still comes from the only judge, whose key is not exported: a warning naming the variable.
    assert.match(
      e.problems!.find((p) => p.field === 'services')!.message,
      /judge "qwen72" has no API key here: .*export MEDRL_JUDGE_API_KEY/,
    );
  });

  it('a judge at 127.0.0.1 on this machine cannot be reached by a run on a cluster: said before submit', async () => {
    const e = await resolveRunEnv(req(spec({ framework: 'trl', algorithm: 'sft' }), {}, { host: 'cluster', scheduler: 'slurm' }));
    assert.match(
      e.problems!.map((p) => p.message).join('\n'),
      /judge "qwen72" is at http:\/\/127\.0\.0\.1:8082\/v1\/ on this machine, which the trainer \(on cluster, slurm scheduler\) cannot reach/,
    );
  });

  it('the ray scheduler gets no secrets: a needed key refuses, HF_TOKEN stays behind with a warning', async () => {
    const e = await resolveRunEnv(
      req(
        spec({ framework: 'verl', algorithm: 'grpo', reward: { path: 'r.py' } }),
        { MEDRL_JUDGE_API_KEY: 'jk', HF_TOKEN: 'hf' },
        { host: 'head', scheduler: 'ray' },
      ),
    );
    assert.deepEqual(e.secrets, {});
    assert.deepEqual(
      e.problems!.map((p) => [p.severity, p.message.split(':')[0]]),
      [
        ['warning', 'judge "qwen72" is at http'],
        ['error', 'MEDRL_JUDGE_API_KEY cannot reach the run'],
        ['warning', 'HF_TOKEN is not passed to the run'],
      ],
    );
  });
});

describe("ray: the run's variables reach its workers through runtime_env", () => {
  it("runtime_env.yaml holds launch.sh's variables as env_vars, and ray job submit is given it", () => {
    const files = rayScheduler.files(
      {
        id: 'r1',
        dir: '/runs/r1',
        spec: spec({ framework: 'verl', algorithm: 'grpo', reward: { path: 'r.py' } }),
        env: { MEDRL_JUDGE_URL: 'http://judge:8/v1', MEDRL_RUN_ID: 'r1' },
      },
      ['source ~/venv/bin/activate'],
    );
    assert.deepEqual(JSON.parse(files[RAY_RUNTIME_ENV]!), { env_vars: { MEDRL_JUDGE_URL: 'http://judge:8/v1', MEDRL_RUN_ID: 'r1' } });
    // The uploaded reward's folder reaches verl's reward workers, ahead of the cluster's own PYTHONPATH.
    const withReward = rayScheduler.files(
      {
        id: 'r1',
        dir: '/runs/r1',
        spec: spec({ framework: 'verl', algorithm: 'grpo', reward: { path: 'r.py' } }),
        env: {},
        pythonPath: '/runs/r1/reward',
      },
      [],
    );
    assert.deepEqual(JSON.parse(withReward[RAY_RUNTIME_ENV]!), { env_vars: { PYTHONPATH: '/runs/r1/reward:${PYTHONPATH}' } });
  });
});

describe('multi-node Slurm', () => {
  const verl = spec({
    framework: 'verl',
    algorithm: 'grpo',
    reward: { path: 'r.py' },
    scheduler: 'slurm',
    resources: { nodes: 3, gpusPerNode: 8, cpusPerTask: 32 },
  });
  const trl = spec({ framework: 'trl', algorithm: 'sft', scheduler: 'slurm', resources: { nodes: 2, gpusPerNode: 4 } });

  it('verl PPO/GRPO: a Ray head on the first node, a worker on each other, all joined before job.sh starts the driver', () => {
    const s = renderSbatchScript({ id: 'r1', dir: '/runs/r 1', spec: verl, env: {} });
    const head = s.indexOf('ray start --head');
    const worker = s.indexOf('ray start --address');
    const wait = s.indexOf('until [');
    const job = s.indexOf("exec bash '/runs/r 1/job.sh'");
    assert.ok(head > 0 && head < worker && worker < wait && wait < job, s);
    assert.match(
      s,
      /srun --nodes=1 --ntasks=1 -w "\$MEDRL_HEAD_NODE" bash '\/runs\/r 1\/node-env\.sh' ray start --head --node-ip-address="\$MEDRL_HEAD_ADDR" --port=\$MEDRL_RAY_PORT .* --num-gpus=8/,
    );
    assert.match(s, /export RAY_ADDRESS="\$MEDRL_HEAD_ADDR:\$MEDRL_RAY_PORT"/);
    assert.match(s, /" = 3 \]; do/);
    const files = slurmScheduler.files({ id: 'r1', dir: '/runs/r1', spec: verl, env: { MEDRL_JUDGE_URL: "http://a'b" } }, [
      'conda activate verl',
    ]);
    // Ray's processes get the run's setup and variables (they do not start under launch.sh).
    assert.equal(
      files[NODE_ENV_SCRIPT],
      "#!/usr/bin/env bash\n# Runs its arguments with the run's setup and variables (what launch.sh has): Ray's processes on each node.\nconda activate verl\nexport MEDRL_JUDGE_URL='http://a'\\''b'\nexec \"$@\"\n",
    );
    assert.equal(files['job.sh'], undefined, 'the driver runs once, on the head: job.sh is the usual one');
  });

  it("TRL: srun starts launch.sh on every node with accelerate's machine flags, inserted before the trainer's own", () => {
    const files = slurmScheduler.files({ id: 'r1', dir: '/runs/r1', spec: trl, env: {} }, []);
    assert.match(files['job.sh']!, /^  srun --kill-on-bad-exit=1 bash \/runs\/r1\/node\.sh < \/dev\/null$/m);
    assert.match(
      files[NODE_SCRIPT]!,
      /exec bash \/runs\/r1\/launch\.sh --num_machines 2 --machine_rank "\$SLURM_PROCID" --main_process_ip "\$MEDRL_HEAD_ADDR" --main_process_port "\$MEDRL_HEAD_PORT" >> "\$medrl_log"/,
    );
    const launch = renderLaunchScript({
      id: 'r1',
      name: 'r',
      dir: '/runs/r1',
      workdir: '/w',
      setup: [],
      env: {},
      command: { argv: ['trl', 'sft', '--model_name_or_path', 'm', '--num_processes', '8'], env: {} },
      summary: 's',
    });
    assert.match(launch, /^exec trl sft \\\n {2}"\$@" \\\n {2}--model_name_or_path m \\\n {2}--num_processes 8$/m);
    const script = renderLaunchScript({
      id: 'r1',
      name: 'r',
      dir: '/runs/r1',
      workdir: '/w',
      setup: [],
      env: {},
      command: { argv: ['accelerate', 'launch', '--num_processes', '8', 'train.py', '--lr', '1'], env: {} },
      summary: 's',
    });
    assert.match(script, /^exec accelerate launch \\\n {2}"\$@" \\\n {2}--num_processes 8 train\.py/m);
    const resumed = renderLaunchScript({
      id: 'r1',
      name: 'r',
      dir: '/runs/r1',
      workdir: '/w',
      setup: [],
      env: {},
      command: { argv: ['python3', '/runs/r1/trl_resume.py', 'sft', '--resume_from_checkpoint', 'c'], env: {} },
      summary: 's',
    });
    assert.match(
      resumed,
      /^exec python3 \/runs\/r1\/trl_resume\.py sft \\\n {2}"\$@" \\\n {2}--resume_from_checkpoint c$/m,
      'a resumed TRL run gets the per-node flags after its subcommand',
    );
    const torch = renderLaunchScript({
      id: 'r1',
      name: 'r',
      dir: '/runs/r1',
      workdir: '/w',
      setup: [],
      env: {},
      command: { argv: ['torchrun', '--nnodes=2', '-m', 'verl.trainer.fsdp_sft_trainer'], env: {} },
      summary: 's',
    });
    assert.match(torch, /^exec torchrun \\\n {2}"\$@" \\\n {2}--nnodes=2/m);
    const sft = slurmScheduler.files({ id: 'r1', dir: '/runs/r1', spec: spec({ ...trl, framework: 'verl' }), env: {} }, []);
    assert.match(
      sft[NODE_SCRIPT]!,
      /launch\.sh --node_rank="\$SLURM_PROCID" --master_addr="\$MEDRL_HEAD_ADDR" --master_port="\$MEDRL_HEAD_PORT"/,
    );
  });

  it('the generated scripts are valid bash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-nodes-'));
    for (const s of [verl, trl]) {
      const files = slurmScheduler.files({ id: 'r1', dir, spec: s, env: { A: 'x y' } }, []);
      for (const [name, text] of Object.entries(files)) {
        writeFileSync(join(dir, name), text);
        execFileSync('bash', ['-n', join(dir, name)]);
      }
    }
  });
});

describe('services: bind and GPUs', () => {
  it("a service on the trainer's machine binds 127.0.0.1; on another host, or for a Slurm run, 0.0.0.0; gpus pin CUDA_VISIBLE_DEVICES", () => {
    const s = spec({
      framework: 'verl',
      algorithm: 'grpo',
      reward: { path: 'r.py' },
      host: 'gpu1',
      services: {
        simulator: { model: 'Henrychur/DiagGym', host: 'gpu2', gpus: [0, 1, 2, 3], tensorParallel: 4 },
        judge: { model: 'Qwen/Qwen2.5-72B-Instruct' },
        pinned: { model: 'm', host: 'gpu2', bind: '10.0.0.5' },
      },
    });
    const l = serviceLaunchesOfSpec(s, { host: 'gpu1', scheduler: 'ssh' });
    assert.deepEqual(
      l.map((x) => [x.launch.name, x.host, x.launch.bind, x.launch.gpus]),
      [
        ['simulator', 'gpu2', '0.0.0.0', '0,1,2,3'],
        ['judge', 'gpu1', '127.0.0.1', undefined],
        ['pinned', 'gpu2', '10.0.0.5', undefined],
      ],
    );
    assert.equal(
      serviceLaunchesOfSpec(s, { host: 'gpu1', scheduler: 'slurm' })[1]!.launch.bind,
      '0.0.0.0',
      'a Slurm job runs on a compute node',
    );
    const script = serviceScript(l[0]!.launch, 8000, true);
    assert.match(script, /^export CUDA_VISIBLE_DEVICES=0,1,2,3$/m);
    assert.match(script, /vllm serve Henrychur\/DiagGym --host 0\.0\.0\.0 --port 8000/);
  });
});
