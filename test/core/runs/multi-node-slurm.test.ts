import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import { runSpecSchema } from '../../../src/core/runs/run-spec';
import { nodeCpuLines, renderSbatchScript, slurmResourceProblems, slurmScheduler } from '../../../src/core/runs/slurm-scheduler';

const spec = (s: Record<string, unknown>): RunSpec =>
  runSpecSchema.parse({ name: 'r', model: 'Qwen/Qwen2.5-0.5B', data: { train: 'd' }, scheduler: 'slurm', ...s });
const verl = (resources: Record<string, unknown>) => spec({ framework: 'verl', algorithm: 'grpo', reward: { path: 'r.py' }, resources });

/** Runs `lines` in a real bash with these Slurm variables and returns what `print` echoes. */
function bash(lines: string[], env: Record<string, string>, print: string): string {
  return execFileSync('bash', ['-c', [...lines, `echo "${print}"`].join('\n')], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  }).trim();
}

/** The `ray start` lines of job.sbatch, with the Ray port and CPU lines before them, as bash would run them (srun echoes). */
function rayStarts(s: RunSpec, env: Record<string, string>): string[] {
  const script = renderSbatchScript({ id: 'r1', dir: '/runs/r1', spec: s, env: {} });
  const body = script.slice(script.indexOf('export MEDRL_RAY_PORT'), script.indexOf('medrl_waited=0'));
  const out = execFileSync(
    'bash',
    [
      '-c',
      `srun() { echo "$*"; }\nbash() { if [ "$2" = python3 ]; then return 1; fi; echo "$*"; }\nmedrl_nodes=(a b c)\nMEDRL_HEAD_NODE=a\nMEDRL_HEAD_ADDR=10.0.0.1\n${body}\nwait`,
    ],
    { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' },
  );
  // The srun lines run in the background (`&`): their order is the nodes' (-w a, b, c), not the order they print in.
  const node = (l: string) => /-w (\S+)/.exec(l)?.[1] ?? '';
  return out
    .split('\n')
    .filter((l) => l.includes('ray start'))
    .sort((a, b) => node(a).localeCompare(node(b)));
}

describe('Ray on Slurm: per-job ports and CPUs', () => {
  it("each job's GCS, dashboard and agent ports come from its job id, so two jobs on one node differ; workers take random ports", () => {
    const [head7, worker7] = rayStarts(verl({ nodes: 2, gpusPerNode: 8, cpusPerTask: 32 }), {
      SLURM_JOB_ID: '7',
      SLURM_CPUS_PER_TASK: '32',
      SLURM_JOB_CPUS_PER_NODE: '32(x2)',
    });
    assert.match(
      head7!,
      /--head --node-ip-address=10\.0\.0\.1 --port=40035 --dashboard-port=40037 --dashboard-agent-listen-port=40038 --dashboard-agent-grpc-port=40039 --min-worker-port=0 --max-worker-port=0 --num-gpus=8 --num-cpus=32 --block/,
    );
    assert.match(
      worker7!,
      /-w b .* ray start --address=10\.0\.0\.1:40035 --dashboard-agent-listen-port=40038 --dashboard-agent-grpc-port=40039 --min-worker-port=0 --max-worker-port=0 --num-gpus=8 --num-cpus=32 --block/,
    );
    const [head8] = rayStarts(verl({ nodes: 2, gpusPerNode: 8, cpusPerTask: 32 }), { SLURM_JOB_ID: '8', SLURM_CPUS_PER_TASK: '32' });
    assert.match(head8!, /--port=40040 /, 'the next job id gets the next block of five ports');
    const [highest] = rayStarts(verl({ nodes: 2 }), { SLURM_JOB_ID: '3999', SLURM_CPUS_ON_NODE: '1' });
    assert.match(highest!, /--port=59995 .*--dashboard-agent-grpc-port=59999 /, 'the last block ends below 60000');
    assert.doesNotMatch(head7!, /6379|8265|10001|52365/, "none of Ray's fixed default ports");
  });

  it("--num-cpus is always given: the spec's cpusPerTask, else the CPUs Slurm gave the job on each node", () => {
    const s = verl({ nodes: 3, gpusPerNode: 8 });
    assert.doesNotMatch(renderSbatchScript({ id: 'r1', dir: '/r', spec: s, env: {} }), /^#SBATCH --cpus-per-task/m);
    const starts = rayStarts(s, { SLURM_JOB_ID: '7', SLURM_JOB_CPUS_PER_NODE: '72,36(x2)', SLURM_CPUS_ON_NODE: '72' });
    assert.deepEqual(
      starts.map((l) => /--num-cpus=(\d+)/.exec(l)?.[1]),
      ['72', '36', '36'],
      'node by node, from SLURM_JOB_CPUS_PER_NODE',
    );
    const fallback = rayStarts(s, { SLURM_JOB_ID: '7', SLURM_CPUS_ON_NODE: '12' });
    assert.deepEqual(
      fallback.map((l) => /--num-cpus=(\d+)/.exec(l)?.[1]),
      ['12', '12', '12'],
      'without SLURM_JOB_CPUS_PER_NODE: the batch node SLURM_CPUS_ON_NODE',
    );
  });

  it('SLURM_JOB_CPUS_PER_NODE in its compressed form is read node by node', () => {
    assert.equal(bash(nodeCpuLines(), { SLURM_JOB_CPUS_PER_NODE: '72(x2),36,8(x3)' }, '${medrl_cpus[*]}'), '72 72 36 8 8 8');
    assert.equal(bash(nodeCpuLines(), { SLURM_JOB_CPUS_PER_NODE: '4' }, '${medrl_cpus[*]}'), '4');
    assert.equal(bash(nodeCpuLines(), {}, '${#medrl_cpus[@]}'), '0');
  });
});

describe('Slurm CPUs and memory', () => {
  it('cpusPerTask and memory become #SBATCH lines, and nothing is said', () => {
    const s = spec({ framework: 'trl', algorithm: 'sft', resources: { cpusPerTask: 16, memory: '200G' } });
    const sbatch = renderSbatchScript({ id: 'r1', dir: '/r', spec: s, env: {} });
    assert.match(sbatch, /^#SBATCH --cpus-per-task=16$/m);
    assert.match(sbatch, /^#SBATCH --mem=200G$/m);
    assert.deepEqual(slurmScheduler.problems!(s, 'configs/sft.yaml'), []);
  });

  it("a TRL spec that asks for neither is warned, at each field, that it gets the partition's default CPUs and memory", () => {
    const s = spec({ framework: 'trl', algorithm: 'sft' });
    const problems = slurmResourceProblems(s, 'configs/sft.yaml');
    assert.deepEqual(
      problems.map((p) => [p.file, p.field, p.severity]),
      [
        ['configs/sft.yaml', 'resources.cpusPerTask', 'warning'],
        ['configs/sft.yaml', 'resources.memory', 'warning'],
      ],
    );
    assert.match(problems[0]!.message, /gets the partition's default CPUs .* TRL runs on those: set resources\.cpusPerTask/);
    assert.match(problems[1]!.message, /partition's default memory .* set resources\.memory/);
    assert.deepEqual(
      slurmResourceProblems(spec({ framework: 'trl', algorithm: 'sft', resources: { memory: '64G' } }), 'f').map((p) => p.field),
      ['resources.cpusPerTask'],
    );
  });
});
