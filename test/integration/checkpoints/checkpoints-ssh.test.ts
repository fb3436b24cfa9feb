import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { SshHost } from '../../../src/core/remote/ssh-host';
import { listCheckpoints } from '../../../src/core/checkpoints/list-checkpoints';
import { discoverCheckpoints } from '../../../src/core/checkpoints/discover-checkpoints';
import { startMerge, waitForMerge } from '../../../src/core/checkpoints/merge-checkpoint';
import { download } from '../../../src/core/checkpoints/download';
import { deleteCheckpoint } from '../../../src/core/checkpoints/delete-checkpoint';
import {
  forwardService,
  startService,
  stopService,
  waitForService,
  type Service,
  type ServiceStatus,
} from '../../../src/core/services/services';
import { writeStandInBaseModel, writeStandInRun } from '../../fixtures/stand-in-checkpoints';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RunMetrics } from '../../../src/core/metrics/run-metrics';
import { metricsAtStep } from '../../../src/core/metrics/headline';
import { writeDenseVerlSteps } from '../../core/metrics/verl-log-generator';

const STANDINS = join(__dirname, '../../../standins');

describe('checkpoints and services on a real sshd (loopback)', () => {
  let sshd: SshdFixture;
  let host: SshHost;
  let runs: string;
  const services: Service[] = [];
  before(async () => {
    sshd = await startSshd();
    host = sshd.makeHost({ name: 'gpu' });
    runs = join(sshd.remoteHome, '.medrl/runs');
    writeStandInRun(runs, {
      id: 'diag-grpo',
      framework: 'verl',
      steps: [25, 50, 75],
      latest: 75,
      critic: true,
      model: writeStandInBaseModel(join(sshd.remoteHome, 'models/base')),
    });
    writeStandInRun(runs, { id: 'doctor-sft', framework: 'trl', steps: [500], host: 'gpu' });
  });
  after(async () => {
    for (const s of services) await stopService(host, s);
    await host.dispose();
    await sshd.stop();
  });

  it("discovers every run's checkpoints over SSH in one round trip", async () => {
    const before = host.stats().roundTrips;
    await discoverCheckpoints(host, { runsDir: '~/.medrl/runs' });
    assert.equal(host.stats().roundTrips - before, 1);
    const d = await listCheckpoints(host, { runsDir: '~/.medrl/runs' });
    const verl = d.runs.find((r) => r.run.id === 'diag-grpo')!;
    assert.deepEqual(
      verl.checkpoints.map((c) => [c.step, c.latest, c.kind]),
      [
        [75, true, 'verl-fsdp'],
        [50, false, 'verl-fsdp'],
        [25, false, 'verl-fsdp'],
      ],
    );
    assert.equal(verl.checkpoints[0]!.host, 'gpu');
    assert.equal(verl.checkpoints[1]!.metrics?.['critic/score/mean'], 0.5, "the run's metrics at step 50");
    assert.equal(verl.checkpoints[0]!.path, join(runs, 'diag-grpo/checkpoints/global_step_75'));
    assert.equal(d.runs.find((r) => r.run.id === 'doctor-sft')!.checkpoints[0]!.kind, 'trl-full');
  });

  it("shows a long run's checkpoint metrics from a few hundred KB of its 21 MB log over SSH", async () => {
    const longRuns = join(sshd.remoteHome, '.medrl/long-runs');
    const dir = writeStandInRun(longRuns, { id: 'long-grpo', framework: 'verl', steps: [5000, 10_000], latest: 10_000 });
    rmSync(join(dir, 'metrics.jsonl'), { force: true }); // the console log is what is searched
    await writeDenseVerlSteps(join(dir, 'output.log'), 10_000);
    const whole = new RunMetrics(new LocalHost(), { host: 'local', dir, framework: 'verl' });
    await whole.poll();
    const before = host.stats().bytesRead;
    const d = await listCheckpoints(host, { runsDir: '~/.medrl/long-runs' });
    const read = host.stats().bytesRead - before;
    const cks = d.runs[0]!.checkpoints;
    assert.deepEqual(
      cks.map((c) => c.step),
      [10_000, 5000],
    );
    for (const c of cks) assert.deepEqual(c.metrics, metricsAtStep(whole.series, c.step)!.metrics, `metrics at step ${c.step}`);
    assert.ok(read < 1e6, `read ${read} bytes over SSH (the log is ${statSync(join(dir, 'output.log')).size})`);
  });

  it('merges through the stand-in merger as a tracked run over SSH', async () => {
    const ck = (await listCheckpoints(host, { runsDir: '~/.medrl/runs' })).runs.find((r) => r.run.id === 'diag-grpo')!.checkpoints[0]!;
    const job = await startMerge(host, ck, '~/.medrl/runs', { baseModel: '~/models/base', env: { PYTHONPATH: STANDINS } });
    const target = await waitForMerge(host, job, () => {}, { pollMs: 100 });
    assert.deepEqual(readdirSync(target).sort(), [
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'special_tokens_map.json',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const again = (await listCheckpoints(host, { runsDir: '~/.medrl/runs' })).runs.find((r) => r.run.id === 'diag-grpo')!.checkpoints[0]!;
    assert.equal(again.servable, target);
  });

  it('a download survives the SSH connection being killed, continues from the verified bytes, and is identical', async () => {
    const big = join(sshd.remoteHome, 'big.safetensors');
    writeFileSync(big, randomBytes(48 << 20));
    const dest = join(mkdtempSync(join(tmpdir(), 'ck-ssh-')), 'big.safetensors');
    let killed = 0;
    const retries: string[] = [];
    const r = await download(host, '~/big.safetensors', dest, {
      onProgress: (p) => {
        if (!killed && p.done > 12 << 20) killed = sshd.killConnections();
      },
      onRetry: (err) => retries.push(String(err)),
    });
    assert.ok(killed > 0, 'the connection was killed mid-way');
    assert.equal(retries.length, 1, retries.join('\n'));
    assert.match(retries[0]!, /connection lost/);
    assert.ok(r.transferred < (48 << 20) + (40 << 20), `continued rather than restarting: ${r.transferred}`);
    assert.ok(readFileSync(dest).equals(readFileSync(big)));
    rmSync(big);
  });

  it('with no retries a killed connection leaves a partial file the next call resumes', async () => {
    const big = join(sshd.remoteHome, 'b2.bin');
    writeFileSync(big, randomBytes(24 << 20));
    const dest = join(mkdtempSync(join(tmpdir(), 'ck-ssh-')), 'b2.bin');
    // The previous test killed the connection: reconnect before this one starts, so only its own kill is measured.
    await host.exec('true');
    await assert.rejects(
      download(host, big, dest, {
        retries: 0,
        onProgress: (p) => {
          if (p.done > 6 << 20) sshd.killConnections();
        },
      }),
      /connection lost/,
    );
    assert.ok(existsSync(`${dest}.partial`));
    const r = await download(host, big, dest);
    assert.ok(r.transferred < 24 << 20 && r.transferred > 0, `resumed: ${r.transferred}`);
    assert.ok(readFileSync(dest).equals(readFileSync(big)));
    rmSync(big);
  });

  it('deletes a checkpoint over SSH and reports the space freed', async () => {
    const ck = (await listCheckpoints(host, { runsDir: '~/.medrl/runs' })).runs
      .find((r) => r.run.id === 'diag-grpo')!
      .checkpoints.find((c) => c.step === 25)!;
    const r = await deleteCheckpoint(host, ck);
    assert.equal(r.freedBytes, ck.sizeBytes);
    assert.ok(!existsSync(ck.path));
  });

  it('a stand-in vLLM service on the SSH host is reached through the port forward: starting → ready', async () => {
    const svc = await startService(
      host,
      '~/.medrl/runs',
      {
        name: 'judge',
        engine: 'vllm',
        model: 'Qwen/Qwen2.5-72B-Instruct',
        servedModelName: 'Judger',
        standins: STANDINS,
        env: { MEDRL_STANDIN_STARTUP_SECONDS: '1' },
      },
      'sk-1',
    );
    services.push(svc);
    const fwd = await forwardService(host, svc);
    try {
      assert.notEqual(fwd.localPort, svc.port, 'a real forward to a local port');
      const seen: ServiceStatus[] = [];
      const s = await waitForService(host, svc, fwd.localPort, {
        apiKey: 'sk-1',
        pollMs: 150,
        timeoutMs: 30_000,
        onStatus: (x) => seen.push(x),
      });
      assert.deepEqual(
        seen.map((x) => x.state),
        ['starting', 'ready'],
      );
      assert.deepEqual(s.models, ['Judger']);
      const res = await fetch(`http://127.0.0.1:${fwd.localPort}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-1', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'Judger', messages: [{ role: 'user', content: 'Reference: aspirin\nResponse: aspirin' }] }),
      });
      assert.equal(res.status, 200);
    } finally {
      await fwd.close();
    }
  });

  it('a service that dies on the SSH host shows failed with its log', async () => {
    const svc = await startService(host, '~/.medrl/runs', {
      name: 'broken',
      engine: 'sglang',
      model: 'm',
      standins: STANDINS,
      args: ['--port', 'not-a-port'],
    });
    const fwd = await forwardService(host, svc);
    try {
      const s = await waitForService(host, svc, fwd.localPort, { pollMs: 150, timeoutMs: 30_000 });
      assert.equal(s.state, 'failed');
      assert.match(s.logTail ?? '', /invalid int value: 'not-a-port'/);
    } finally {
      await fwd.close();
    }
  });
});
