import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RUN_FILES } from '../../../src/core/runs/run-record';
import { SECOND_NODE, useSlurmCluster } from '../fixtures/slurm';
import { adaptExample, makeWorkspace, request, submitRun, waitForState } from './run-fixture';

// Two real Slurm nodes: this machine, and `medrl-node2`, a slurmd in network and UTS namespaces of its own over a veth
// pair (test/integration/fixtures/slurm.ts). Neither name resolves to an address the other node reaches (this machine's
// /etc/hosts maps its own to 127.0.0.1; medrl-node2 has none), as on clusters whose /etc/hosts maps each node's own name
// to 127.0.1.1 (Debian's default): the head's address the job hands out must still be one the other node reaches.
const host = new LocalHost();

/** What `scontrol show job` says of a job, as key=value pairs. */
function slurmJob(id: string): Record<string, string> {
  const out = execFileSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8', env: process.env });
  return Object.fromEntries(
    out
      .trim()
      .split(/\s+/)
      .map((kv) => kv.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
}

describe('two real Slurm nodes: multi-node TRL and verl runs submitted as a user does', () => {
  const cluster = useSlurmCluster(2);

  it('a two-node TRL GRPO spec: sbatch asks for what the spec says, one launcher per node reaches the head, the run succeeds', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('doctor-trl-grpo.yaml', ws, {
      'resources.nodes': 2,
      'resources.gpusPerNode': 1,
      'resources.partition': 'debug',
      'resources.time': '00:10:00',
      'env.MEDRL_STANDIN_STEP_SECONDS': '0.1',
      'env.MEDRL_STANDIN_RENDEZVOUS_SECONDS': '30',
    });
    const { record } = await submitRun(request(ws, host, spec, text));
    const job = slurmJob(record.jobId!);
    assert.match(job.NumNodes ?? '', /^2(-2)?$/, 'two nodes, no more, no fewer');
    assert.match(job.TresPerNode ?? '', /gres:gpu:1/);
    assert.equal(job.Partition, 'debug');
    assert.equal(job.TimeLimit, '00:10:00');
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 120_000);
    const node1 = existsSync(join(record.dir, 'output-node1.log')) ? readFileSync(join(record.dir, 'output-node1.log'), 'utf8') : '';
    assert.equal(done.state, 'succeeded', `${done.reason}\n${done.logTail}\n--- node 1\n${node1}\n${cluster.logs()}`);
    const node0 = readFileSync(join(record.dir, RUN_FILES.log), 'utf8');
    // Slurm picks the head (the job's first node); the other node's launcher must reach it at its address.
    const [headNode, otherNode] = node0.startsWith(`medrl: node 0 of 2 on ${SECOND_NODE},`)
      ? [SECOND_NODE, hostname()]
      : [hostname(), SECOND_NODE];
    const head = `${cluster.addresses[headNode]!.replace(/\./g, '\\.')}:\\d+`;
    assert.match(node0, new RegExp(`^medrl: node 0 of 2 on ${headNode}, head ${head}$`, 'm'));
    assert.match(node1, new RegExp(`^medrl: node 1 of 2 on ${otherNode}, head ${head}$`, 'm'));
    assert.match(node1, new RegExp(`^MedRL stand-in: machine 1 of 2 joined the main process at ${head} from ${otherNode}$`, 'm'));
    assert.ok(existsSync(join(record.dir, 'output/checkpoint-4/trainer_state.json')), 'the main process saved');
  });

  it("a two-node verl GRPO spec: srun starts Ray's head and a worker, the driver sees both nodes, each loads the reward", async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, {
      scheduler: 'slurm',
      'resources.nodes': 2,
      'resources.gpusPerNode': 1,
      'resources.partition': 'debug',
      'resources.time': '00:10:00',
      'env.MEDRL_STANDIN_STEP_SECONDS': '0.1',
      'env.MEDRL_STANDIN_STEPS': '2',
    });
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.match(slurmJob(record.jobId!).NumNodes ?? '', /^2(-2)?$/);
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 180_000);
    const slurmOut = () => execFileSync('sh', ['-c', `cat ${join(record.dir, 'slurm-')}*.out 2>/dev/null || true`], { encoding: 'utf8' });
    assert.equal(done.state, 'succeeded', `${done.reason}\n${done.logTail}\n--- slurm\n${slurmOut()}\n${cluster.logs()}`);
    const log = readFileSync(join(record.dir, RUN_FILES.log), 'utf8');
    for (const [name, addr] of Object.entries(cluster.addresses)) {
      assert.match(
        log,
        new RegExp(
          `^MedRL stand-in: Ray node ${name} \\(${addr.replace(/\./g, '\\.')}\\): MEDRL_RUN_ID=${record.id}, loaded compute_score from `,
          'm',
        ),
        log,
      );
    }
  });
});
