import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { listRuns } from '../../../src/core/runs/list-runs';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { followLog } from '../../../src/core/runs/follow-log';
import { STANDIN_SETUP, adaptExample, makeWorkspace, request, submitRun, waitForState, type Workspace } from './run-fixture';

describe('runs on an SSH host (a real sshd on loopback) with the stand-in trainers', () => {
  let sshd: SshdFixture;
  let host: Host;
  let ws: Workspace;
  before(async () => {
    sshd = await startSshd();
    host = sshd.makeHost({ name: 'loopback' });
    ws = makeWorkspace('~/.medrl/runs');
    ws.hostConfig = {
      name: 'loopback',
      kind: 'ssh',
      sshAlias: sshd.alias,
      runsDir: '~/.medrl/runs',
      setup: STANDIN_SETUP,
      env: {},
      scheduler: 'ssh',
    };
  });
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
});
