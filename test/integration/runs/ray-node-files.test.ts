import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { planRun } from '../../../src/core/runs/submit-run';
import { adaptExample, makeWorkspace, request } from './run-fixture';
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
    env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0' },
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

describe("a Ray submit checks that every node of the cluster sees the run's files (real two-node Ray)", () => {
  const ws = makeWorkspace();
  mkdirSync(ws.runsDir, { recursive: true });
  before(async () => {
    netns = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec sleep 100000'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    bin = mkdtempSync(join(tmpdir(), 'medrl-ray-bin-'));
    const python = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(bin, 'python3'), `#!/bin/sh\nexec nsenter --net=/proc/${netns.pid}/ns/net ${python} "$@"\n`);
    chmodSync(join(bin, 'python3'), 0o755);
    const temp = mkdtempSync(join(tmpdir(), 'medrl-ray-tmp-'));
    const common = ['--block', '--disable-usage-stats', '--num-cpus=1', `--temp-dir=${temp}`];
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
    startNode(['unshare', '-m', '-u', 'sh', '-c', `hostname node2 && mount -t tmpfs none ${join(ws.dir, 'data')} && exec ${worker}`]);
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
  // Built when a test runs: `bin` exists only after before().
  const setup = () => [`export PATH=${bin}:"$PATH"`, `export RAY_ADDRESS=127.0.0.1:${PORT}`];

  it('a data file the head sees and node2 does not is refused at data.train, naming node2; the runs folder is seen by both', async () => {
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws);
    const req = request(ws, host, spec, text);
    req.hostConfig = { ...req.hostConfig, setup: [...req.hostConfig.setup, ...setup()] };
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
    req.hostConfig = { ...req.hostConfig, setup: [...req.hostConfig.setup, ...setup()], sharedFilesystem: [ws.dir] };
    const { problems } = await planRun(req);
    assert.deepEqual(
      problems.filter((p) => /Ray node|every node/.test(p.message)),
      [],
    );
  });
});
