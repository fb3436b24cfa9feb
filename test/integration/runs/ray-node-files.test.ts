import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { planRun, type SubmitRequest } from '../../../src/core/runs/submit-run';
import { adaptExample, makeWorkspace, request, STANDINS, submitRun, waitForState } from './run-fixture';
import { RUN_FILES } from '../../../src/core/runs/run-record';
import { stopProcessGroups } from '../fixtures/process-groups';

// A real two-node Ray cluster (Ray 2.58) on this machine, in a network namespace of the test's own (every node on
// 127.0.0.1): the second node also has a mount namespace and hostname of its own, where the workspace's data folder is
// an empty tmpfs, as on a node that does not mount the disk the data is on. The host checks reach the cluster through a
// python3 on PATH that enters the namespace.
const PORT = 6390;
const procs: ChildProcess[] = [];
let netns: ChildProcess;
let bin: string;

function startNode(args: string[]): ChildProcess {
  const p = spawn('nsenter', [`--net=/proc/${netns.pid}/ns/net`, ...args], {
    detached: true,
    stdio: 'ignore',
    // verl is installed on every node of a verl cluster: here its stand-in, which the job's tasks import.
    env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0', PYTHONPATH: STANDINS },
  });
  procs.push(p);
  return p;
}

function aliveNodes(): number {
  const r = spawnSync(
    join(bin, 'python3'),
    ['-c', `import ray; ray.init(address="127.0.0.1:${PORT}", logging_level="ERROR"); print(sum(n["Alive"] for n in ray.nodes()))`],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return Number(r.stdout.trim().split('\n').pop());
}

describe("real two-node Ray: every node must see the run's files, and a verl job's runtime_env reaches the second node", () => {
  const ws = makeWorkspace();
  const unshared = makeWorkspace();
  for (const w of [ws, unshared]) mkdirSync(w.runsDir, { recursive: true });
  before(async () => {
    // Submit records the `ray` it used under $HOME/.medrl/ray-jobs, and the job CLI keeps its jobs: folders of the test's own.
    process.env.HOME = mkdtempSync(join(tmpdir(), 'medrl-ray-home-'));
    process.env.MEDRL_STANDIN_RAY_DIR = mkdtempSync(join(tmpdir(), 'medrl-ray-jobs-'));
    netns = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec sleep 100000'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    bin = mkdtempSync(join(tmpdir(), 'medrl-ray-bin-'));
    const python = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(bin, 'python3'), `#!/bin/sh\nexec nsenter --net=/proc/${netns.pid}/ns/net ${python} "$@"\n`);
    chmodSync(join(bin, 'python3'), 0o755);
    const temp = mkdtempSync(join(tmpdir(), 'medrl-ray-tmp-'));
    // One logical GPU per node (no device behind it): verl asks the cluster for trainer.nnodes x n_gpus_per_node.
    const common = ['--block', '--disable-usage-stats', '--num-cpus=1', '--num-gpus=1', `--temp-dir=${temp}`];
    startNode(['ray', 'start', '--head', `--port=${PORT}`, '--node-ip-address=127.0.0.1', '--include-dashboard=false', ...common]);
    const worker = [
      'ray',
      'start',
      `--address=127.0.0.1:${PORT}`,
      '--node-ip-address=127.0.0.1',
      '--node-manager-port=6391',
      '--object-manager-port=6392',
      '--min-worker-port=20100',
      '--max-worker-port=20200',
      '--dashboard-agent-listen-port=6393',
      '--dashboard-agent-grpc-port=6394',
      '--metrics-export-port=6395',
      '--runtime-env-agent-port=6396',
      ...common,
    ].join(' ');
    // node2 has the paths of the workspace's data and of a second workspace's runs folder, but its own empty disk there.
    const hide = [join(ws.dir, 'data'), unshared.runsDir].map((d) => `mount -t tmpfs none ${d}`).join(' && ');
    startNode(['unshare', '-m', '-u', 'sh', '-c', `hostname node2 && ${hide} && exec ${worker}`]);
    const deadline = Date.now() + 120_000;
    while (aliveNodes() !== 2) {
      if (Date.now() > deadline) throw new Error('the two-node Ray cluster did not come up in 120 s');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
  after(async () => {
    await stopProcessGroups(procs);
    netns?.kill('SIGKILL');
  });

  const host = new LocalHost();
  /** Points a submit at the cluster (when a test runs: `bin` exists only after before()), with medrl.yaml's sharedFilesystem. */
  const onCluster = (req: SubmitRequest, sharedFilesystem?: string[]) => {
    const setup = [...req.hostConfig.setup, `export PATH=${bin}:"$PATH"`, `export RAY_ADDRESS=127.0.0.1:${PORT}`];
    req.hostConfig = { ...req.hostConfig, setup, ...(sharedFilesystem ? { sharedFilesystem } : {}) };
  };

  it('a data file the head sees and node2 does not is refused at data.train, naming node2; the runs folder is seen by both', async () => {
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws);
    const req = request(ws, host, spec, text);
    onCluster(req);
    const { problems } = await planRun(req);
    const node = problems.filter((p) => /Ray node/.test(p.message));
    assert.ok(node.length > 0, JSON.stringify(problems, null, 1));
    for (const p of node) {
      assert.equal(p.severity, 'error');
      assert.match(p.field ?? '', /^data\.(train|val)$/);
      assert.match(
        p.message,
        new RegExp(`^${join(ws.dir, 'data')}/\\S+ is on local but Ray node node2 \\(127\\.0\\.0\\.1\\) cannot see it`),
      );
    }
    assert.ok(!problems.some((p) => p.field === 'host'), 'the runs folder is on both nodes');
  });

  it('hosts.<name>.sharedFilesystem in medrl.yaml (a path prefix every node mounts) skips the check', async () => {
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws);
    const req = request(ws, host, spec, text);
    onCluster(req, [ws.dir]);
    const { problems } = await planRun(req);
    assert.deepEqual(
      problems.filter((p) => /Ray node|every node/.test(p.message)),
      [],
    );
  });

  it('a runs folder node2 has the path of but not the files (its own empty disk there) is refused at the host, naming node2', async () => {
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', unshared);
    const req = request(unshared, host, spec, text);
    onCluster(req);
    const { problems } = await planRun(req);
    const runs = problems.filter((p) => p.field === 'host');
    assert.equal(runs.length, 1, JSON.stringify(problems, null, 1));
    assert.match(
      runs[0]!.message,
      new RegExp(`^the runs folder ${unshared.runsDir} .* is on local but Ray node node2 \\(127\\.0\\.0\\.1\\) cannot see it`),
    );
  });

  it("`ray job submit` of a verl spec: the job's runtime_env reaches a task pinned to node2 (the run id, PYTHONPATH with the reward's folder), and the run succeeds", async () => {
    // Ray's job server needs dashboard packages this machine cannot install: the job CLI is MedRL's stand-in, which starts
    // the entrypoint as Ray's JobSupervisor does (RAY_ADDRESS, RAY_JOB_CONFIG_JSON_ENV_VAR); the cluster, ray.init's
    // runtime_env merge with verl's own and the tasks on each node are real Ray.
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, {
      'resources.nodes': 2,
      'resources.gpusPerNode': 1,
      'env.MEDRL_STANDIN_STEP_SECONDS': '0.1',
      'env.MEDRL_STANDIN_STEPS': '2',
    });
    const req = request(ws, host, spec, text);
    onCluster(req, [ws.dir]);
    const { record } = await submitRun(req);
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 120_000);
    const log = readFileSync(join(record.dir, RUN_FILES.log), 'utf8');
    assert.equal(done.state, 'succeeded', `${done.reason}\n${log}`);
    for (const node of [hostname(), 'node2']) {
      assert.match(
        log,
        new RegExp(
          `^MedRL stand-in: Ray node ${node} \\(127\\.0\\.0\\.1\\): MEDRL_RUN_ID=${record.id}, loaded compute_score from \\S+, its folder on PYTHONPATH$`,
          'm',
        ),
        log,
      );
    }
  });

  it('a spec asking for more GPUs than the cluster has fails as verl fails, with its message', async () => {
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, { 'resources.nodes': 2, 'resources.gpusPerNode': 8 });
    const req = request(ws, host, spec, text);
    onCluster(req, [ws.dir]);
    const { record } = await submitRun(req);
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 120_000);
    assert.equal(done.state, 'failed');
    assert.match(
      readFileSync(join(record.dir, RUN_FILES.log), 'utf8'),
      /ValueError: Total available GPUs 2(\.0)? is less than total desired GPUs 16/,
    );
  });
});
