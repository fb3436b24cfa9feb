import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import { DEAD_PID, writeRunFolder } from '../../fixtures/run-folders';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const STANDIN = join(ROOT, 'test/fixtures/nvidia-smi/standin');

/** Fake installed distributions (just their metadata) so importlib.metadata on the host reports these versions. */
function sitePackages(versions: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-site-'));
  for (const [name, version] of Object.entries(versions)) {
    const info = join(dir, `${name.replace(/-/g, '_')}-${version}.dist-info`);
    mkdirSync(info);
    writeFileSync(join(info, 'METADATA'), `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`);
  }
  return dir;
}

describe('medrl hosts / exec against a real sshd (the CLI as a user runs it)', () => {
  let sshd: SshdFixture;
  let workspace: string;
  const cli = (args: string[], home = sshd.home) =>
    spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
      timeout: 60_000,
    });

  before(async () => {
    sshd = await startSshd();
    workspace = mkdtempSync(join(tmpdir(), 'medrl-ws-'));
    const site = sitePackages({ vllm: '0.8.4', torch: '2.6.0', verl: '0.4.0', transformers: '4.51.3', 'flash-attn': '2.7.4.post1' });
    writeFileSync(
      join(workspace, 'medrl.yaml'),
      [
        'version: 1',
        'hosts:',
        '  gpu:',
        `    ssh: ${sshd.alias}`,
        '    runsDir: ~/medrl-runs',
        '    setup:',
        `      - export PATH=${STANDIN}:$PATH   # stand-in nvidia-smi printing real H200 output`,
        `      - export PYTHONPATH=${site}`,
        '',
      ].join('\n'),
    );
    // The loopback host shares this machine's processes: this test's pid is alive there.
    const runs = join(sshd.remoteHome, 'medrl-runs');
    writeRunFolder(runs, 'a', { pid: process.pid });
    writeRunFolder(runs, 'b', { pid: process.pid, exitCode: 0 });
    writeRunFolder(runs, 'c', { pid: process.pid });
    writeRunFolder(runs, 'd', { pid: DEAD_PID }); // lost: not active
  });
  after(async () => {
    await sshd?.stop();
  });

  it('medrl exec runs the words after -- quoted, with the remote exit code', () => {
    const r = cli(['exec', 'gpu', '--', 'sh', '-c', 'echo "$1"; exit 4', 'sh', "it's a test"]);
    assert.equal(r.status, 4, r.stderr);
    assert.equal(r.stdout, "it's a test\n");
    const j = cli(['exec', 'gpu', '--json', '--', 'echo', 'hi']);
    assert.equal(JSON.parse(j.stdout).stdout, 'hi\n');
  });

  it('medrl hosts status: GPUs, processes, disk and active runs', () => {
    const r = cli(['hosts', 'status', 'gpu', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout);
    assert.deepEqual(
      s.gpus.map((g: { name: string }) => g.name),
      ['NVIDIA H200', 'NVIDIA H200'],
    );
    assert.equal(s.processes.length, 2);
    assert.deepEqual(s.activeRuns.sort(), ['a', 'c']);
    assert.equal(s.disk.path, join(sshd.remoteHome, 'medrl-runs'));
    const text = cli(['hosts', 'status', 'gpu']);
    assert.match(text.stdout, /GPU 1 NVIDIA H200: 12457\/143771 MiB, 100% used, python3\[541\] 12448 MiB/);
    assert.match(text.stdout, /runs: 2 active of 4: (a, c|c, a)$/m);
  });

  it("medrl hosts check: versions from the host's Python, GPU count, and the vLLM 0.8.4 + verl warning (exit 1)", () => {
    const r = cli(['hosts', 'check', 'gpu', '--json']);
    assert.equal(r.status, 1, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.equal(c.packages.vllm, '0.8.4');
    assert.equal(c.packages['flash-attn'], '2.7.4.post1');
    assert.equal(c.packages.trl, null);
    assert.equal(c.gpuCount, 2);
    assert.deepEqual(c.gpuNames, ['NVIDIA H200', 'NVIDIA H200'], 'from nvidia-smi -L, UUIDs left out');
    assert.equal(c.cuda, '13.0', 'from the nvidia-smi table');
    assert.match(c.python, /^3\./);
    assert.ok(c.warnings.some((w: string) => /LoRALRUCache/.test(w)));
  });

  it('one crafted run folder costs only itself: a FIFO output.log and a 100 MB run.json, and the status answers at once', () => {
    const runs = join(sshd.remoteHome, 'medrl-runs');
    writeRunFolder(runs, 'e', { pid: process.pid });
    spawnSync('mkfifo', [join(runs, 'e', 'output.log')]);
    mkdirSync(join(runs, 'f'));
    writeFileSync(join(runs, 'f', 'run.json'), '');
    truncateSync(join(runs, 'f', 'run.json'), 100 << 20);
    try {
      const started = Date.now();
      const r = cli(['hosts', 'status', 'gpu', '--json']);
      assert.ok(Date.now() - started < 20_000, `hosts status took ${Date.now() - started} ms`);
      assert.equal(r.status, 1, r.stderr);
      const s = JSON.parse(r.stdout) as { activeRuns: string[]; runCount: number; problems: { file: string; message: string }[] };
      assert.deepEqual(s.activeRuns.sort(), ['a', 'c', 'e']);
      assert.equal(s.runCount, 5);
      for (const f of ['e/output.log', 'f/run.json'])
        assert.ok(
          s.problems.some((p) => p.file.endsWith(`/${f}`) && /^not read: not a regular file/.test(p.message)),
          JSON.stringify(s.problems),
        );
    } finally {
      rmSync(join(runs, 'e'), { recursive: true });
      rmSync(join(runs, 'f'), { recursive: true });
    }
  });

  it('an unknown host key without a terminal fails with how to add it, and a wrong host name is a usage error', () => {
    const home = mkdtempSync(join(tmpdir(), 'medrl-home-'));
    mkdirSync(join(home, '.ssh'));
    writeFileSync(
      join(home, '.ssh/config'),
      `Host ${sshd.alias}\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  User root\n  IdentityFile ${sshd.clientKey}\n`,
    );
    const r = cli(['exec', 'gpu', '--', 'true'], home);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not in known_hosts .*SHA256:.*ssh-keyscan -p \d+ 127\.0\.0\.1/);
    assert.equal(cli(['exec', 'nope', '--', 'true']).status, 2);
  });
});
