import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { listRuns } from '../../../src/core/runs/list-runs';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { followLog } from '../../../src/core/runs/follow-log';
import { provenanceSchema } from '../../../src/core/runs/provenance';
import { collectHostFacts } from '../../../src/core/runs/provenance-host';
import { readRunProvenance } from '../../../src/core/runs/read-provenance';
import { loopbackRuns, STANDIN_SETUP, adaptExample, request, submitRun, waitForState, type Workspace } from './run-fixture';

describe('runs on an SSH host (a real sshd on loopback) with the stand-in trainers', () => {
  let sshd: SshdFixture;
  let host: Host;
  let ws: Workspace;
  before(async () => ({ sshd, host, ws } = await loopbackRuns()));
  after(async () => {
    await host.dispose();
    await sshd.stop();
  });

  it('a run survives its SSH connection dropping mid-run; after reconnecting it is found succeeded, also by a second client', async () => {
    const { spec, text } = adaptExample('local-demo.yaml', ws, {
      workdir: ws.dir,
      'env.MEDRL_STANDIN_STEP_SECONDS': '0.5',
      'env.MEDRL_STANDIN_STEPS': '6',
    });
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.ok(record.dir.startsWith(sshd.remoteHome), `${record.dir} is under the remote home`);
    await waitForState(host, '~/.medrl/runs', record.id, ['running']);
    assert.ok(sshd.killConnections() > 0, 'the SSH connection was dropped');
    // The call that meets the dropped connection says so (the tree shows the host unreachable); the next one reconnects.
    await listRuns(host, '~/.medrl/runs').then(
      () => undefined,
      (err: unknown) => assert.match(String(err), /connection lost/),
    );
    const done = await waitForState(host, '~/.medrl/runs', record.id, ['succeeded', 'failed', 'lost'], 60_000);
    assert.equal(done.state, 'succeeded', done.reason);
    assert.equal(done.progress.step, 6);
    const second = sshd.makeHost({ name: 'loopback', context: sshd.context() });
    try {
      const listing = await listRuns(second, '~/.medrl/runs');
      assert.equal(listing.runs.find((r) => r.record.id === record.id)?.state, 'succeeded');
      const lines: string[] = [];
      for await (const l of followLog(second, record.dir)) lines.push(l);
      assert.match(lines[0]!, /stand-in/);
    } finally {
      await second.dispose();
    }
    assert.ok(existsSync(join(record.dir, 'metrics.jsonl')));
  });

  it('fails with an exit code, is cancelled, and a killed job is lost, over SSH', async () => {
    const crash = adaptExample('medec-selfplay-verl.yaml', ws, {
      workdir: ws.dir,
      'env.MEDRL_STANDIN_CRASH_AT_STEP': '2',
      'env.MEDRL_STANDIN_EXIT_CODE': '4',
    });
    const a = (await submitRun(request(ws, host, crash.spec, crash.text))).record;
    const failed = await waitForState(host, '~/.medrl/runs', a.id, ['failed', 'succeeded', 'lost']);
    assert.deepEqual([failed.state, failed.exitCode], ['failed', 4]);
    const hang = adaptExample('local-demo.yaml', ws, { workdir: ws.dir, 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const b = (await submitRun(request(ws, host, hang.spec, hang.text))).record;
    const c = (await submitRun(request(ws, host, hang.spec, hang.text))).record;
    await waitForState(host, '~/.medrl/runs', b.id, ['running']);
    await waitForState(host, '~/.medrl/runs', c.id, ['running']);
    await cancelRun(host, b);
    assert.equal((await waitForState(host, '~/.medrl/runs', b.id, ['cancelled', 'lost', 'failed'])).state, 'cancelled');
    await host.exec(`kill -s KILL -- -${c.pgid}`);
    assert.equal((await waitForState(host, '~/.medrl/runs', c.id, ['lost', 'failed'])).state, 'lost');
    assert.ok(readdirSync(join(sshd.remoteHome, '.medrl/runs')).length >= 3);
  });

  it("the run's provenance.json holds the SSH host's versions, its data hashes and the workdir's git commit", async (t) => {
    const git = (...args: string[]) => execFileSync('git', ['-C', ws.dir, ...args], { encoding: 'utf8' }).trim();
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-qm', 'workspace');
    const { spec, text } = adaptExample('local-demo.yaml', ws, { workdir: ws.dir });
    const { record } = await submitRun(request(ws, host, spec, text));
    const file = join(record.dir, 'provenance.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const m = provenanceSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    assert.deepEqual(m.run, { id: record.id, dir: record.dir });
    // The versions are the host's, measured after the run's setup lines (the stand-in verl is first on its PYTHONPATH).
    const hostPython = (
      await host.exec(`${STANDIN_SETUP.join('\n')}\npython3 -c 'import platform; print(platform.python_version())'`)
    ).stdout.trim();
    assert.ok(!('error' in m.environment), JSON.stringify(m.environment));
    if (!('error' in m.environment)) {
      assert.equal(m.environment.python, hostPython);
      assert.equal(m.environment.packages.verl, record.trainerVersion);
    }
    const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    assert.deepEqual(
      m.data.map((d) => [d.field, d.path, d.size, d.sha256, d.hashed]),
      ['train', 'test'].map((stem, i) => {
        const p = join(ws.dir, `data/${stem}.parquet`);
        return [i ? 'data.val' : 'data.train', p, statSync(p).size, sha(p), 'sha256 of the file'];
      }),
    );
    // The stand-in parquet is not parquet: no row count, and the reason is said.
    assert.equal(m.data[0]!.rows, null);
    assert.match(m.data[0]!.rowsFrom, /^not counted: /);
    assert.deepEqual(m.git, { workdir: ws.dir, commit: git('rev-parse', 'HEAD'), dirty: false });
    assert.equal(m.reward?.files['multiple_choice_exact.py']?.sha256, sha(join(ws.dir, 'configs/rewards/multiple_choice_exact.py')));
    assert.deepEqual((await readRunProvenance(host, record)).manifest, m);

    const started = Date.now();
    await collectHostFacts(host, { workdir: ws.dir, setup: STANDIN_SETUP, env: {}, data: [], model: { spec: spec.model } });
    t.diagnostic(`the provenance round trip over SSH (no data): ${Date.now() - started} ms`);
    assert.equal((await waitForState(host, '~/.medrl/runs', record.id, ['succeeded', 'failed', 'lost'], 60_000)).state, 'succeeded');
  });
});
