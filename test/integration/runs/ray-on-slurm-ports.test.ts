import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSpecSchema } from '../../../src/core/runs/run-spec';
import { renderSbatchScript, slurmScheduler, NODE_ENV_SCRIPT } from '../../../src/core/runs/slurm-scheduler';
import { stopProcessGroups } from '../fixtures/process-groups';

// Real Ray (2.58, from the machine's Python index): the head of two Ray-on-Slurm jobs started side by side on one node,
// each with the `ray start --head` line and --num-cpus that job.sbatch gives it. Slurm itself is stood in for by two
// shell commands (srun runs its command here, scontrol names one node), because the lines under test are Ray's.
const spec = runSpecSchema.parse({
  name: 'r',
  model: 'm',
  data: { train: 'd' },
  framework: 'verl',
  algorithm: 'grpo',
  reward: { path: 'r.py' },
  scheduler: 'slurm',
  resources: { nodes: 2, gpusPerNode: 0 },
});

const started: ChildProcess[] = [];
after(async () => {
  // Each head's bash, ray start --block and Ray's processes are one process group of the test's own.
  await stopProcessGroups(started);
});

/** job.sbatch up to its wait for the other nodes, run as job `jobId` with `cpus` as Slurm's SLURM_JOB_CPUS_PER_NODE. */
function startHead(jobId: number, cpus: string): { proc: ChildProcess; log: () => string } {
  const dir = mkdtempSync(join(tmpdir(), `medrl-ray-slurm-${jobId}-`));
  const run = { id: `r${jobId}`, dir, spec, env: {} };
  const script = renderSbatchScript(run);
  writeFileSync(join(dir, 'head.sh'), script.slice(0, script.indexOf('medrl_waited=0')) + 'wait\n');
  writeFileSync(join(dir, NODE_ENV_SCRIPT), slurmScheduler.files(run, [])[NODE_ENV_SCRIPT]!);
  const bin = join(dir, 'bin');
  spawnSync('mkdir', [bin]);
  writeFileSync(join(bin, 'scontrol'), '#!/bin/sh\necho node-a\n');
  // srun --nodes=1 --ntasks=1 -w NODE CMD...: runs CMD here.
  writeFileSync(join(bin, 'srun'), '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do [ "$1" = -w ] && shift; shift; done\nexec "$@"\n');
  chmodSync(join(bin, 'scontrol'), 0o755);
  chmodSync(join(bin, 'srun'), 0o755);
  const out: Buffer[] = [];
  const proc = spawn('bash', [join(dir, 'head.sh')], {
    detached: true,
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      SLURM_JOB_ID: String(jobId),
      SLURM_JOB_NODELIST: 'node-a',
      SLURM_JOB_CPUS_PER_NODE: cpus,
      SLURM_CPUS_ON_NODE: '64',
      RAY_TMPDIR: join(dir, 'ray'),
      RAY_USAGE_STATS_ENABLED: '0',
    },
  });
  proc.stdout!.on('data', (d: Buffer) => out.push(d));
  proc.stderr!.on('data', (d: Buffer) => out.push(d));
  started.push(proc);
  return { proc, log: () => Buffer.concat(out).toString() };
}

/** The Ray cluster at the address the job's script printed: its alive nodes and CPUs. */
function cluster(log: string): { nodes: number; cpus: number } {
  const address = /medrl: Ray GCS (\S+),/.exec(log)?.[1];
  assert.ok(address, log);
  const r = spawnSync(
    'timeout',
    [
      '60',
      'python3',
      '-c',
      'import json, sys, ray; ray.init(address=sys.argv[1], logging_level="ERROR"); print(json.dumps({"nodes": sum(n["Alive"] for n in ray.nodes()), "cpus": ray.cluster_resources().get("CPU", 0)}))',
      address,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `${r.stderr}\n${log}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { nodes: number; cpus: number };
}

async function until(ok: () => boolean, what: string, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('Ray on Slurm: two jobs on one node (real Ray)', () => {
  it("each job's Ray head has its own ports and the CPUs Slurm gave the job, so both come up side by side", async () => {
    const a = startHead(101, '2(x2)');
    await until(() => /Ray runtime started/.test(a.log()), `job 101's Ray head did not start: ${a.log()}`);
    const b = startHead(102, '1,3');
    await until(() => /Ray runtime started/.test(b.log()) || b.proc.exitCode !== null, "job 102's head did not start");
    assert.match(b.log(), /Ray runtime started/, `the second job's head failed beside the first:\n${b.log()}`);
    assert.match(a.log(), /medrl: Ray GCS \S+:40505, CPUs per node 2 2$/m);
    assert.match(b.log(), /medrl: Ray GCS \S+:40510, CPUs per node 1 3$/m);
    assert.deepEqual(cluster(a.log()), { nodes: 1, cpus: 2 }, 'job 101: 2 CPUs, not the 64 of the node');
    assert.deepEqual(cluster(b.log()), { nodes: 1, cpus: 1 }, "job 102's head node has 1 CPU of the job");
  });

  it('a job whose id falls in the same port block (4000 apart) cannot start its head: the ports are what keeps jobs apart', async () => {
    const c = startHead(4101, '1');
    await until(() => c.proc.exitCode !== null || /Ray runtime started/.test(c.log()), 'job 4101 neither failed nor started');
    assert.doesNotMatch(c.log(), /Ray runtime started/);
  });
});
