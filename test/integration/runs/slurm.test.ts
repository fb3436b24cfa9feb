import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { SlurmCluster } from '../fixtures/slurm';
import { adaptExample, makeWorkspace, request, submitRun, waitForState } from './run-fixture';

const host = new LocalHost();
const cluster = new SlurmCluster();

describe('the slurm scheduler on a real single-node Slurm', () => {
  before(async () => {
    await cluster.start();
    // sbatch, squeue and scancel (run through the host, like on a login node) find this cluster.
    Object.assign(process.env, cluster.env);
  });
  after(async () => {
    await cluster.stop();
  });

  it('the doctor SFT spec is submitted with sbatch, queued or running in squeue, and succeeds', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('doctor-trl-sft.yaml', ws, { 'resources.partition': 'debug', 'resources.time': '00:10:00', 'env.MEDRL_STANDIN_STEP_SECONDS': '0.3' });
    assert.equal(spec.scheduler, 'slurm');
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.match(record.jobId ?? '', /^\d+$/);
    const sbatch = readFileSync(join(record.dir, 'job.sbatch'), 'utf8');
    assert.match(sbatch, /^#SBATCH --partition=debug$/m);
    assert.match(sbatch, /^#SBATCH --time=00:10:00$/m);
    const active = await waitForState(host, ws.runsDir, record.id, ['queued', 'running', 'succeeded'], 60_000);
    assert.notEqual(active.state, 'lost');
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 60_000);
    assert.equal(done.state, 'succeeded', `${done.reason} ${done.logTail}\n${cluster.logs()}`);
    assert.ok(existsSync(join(record.dir, 'output/checkpoint-4/trainer_state.json')));
  });

  it('a failing job is failed with its exit code; scancel cancels', async () => {
    const ws = makeWorkspace();
    const crash = adaptExample('doctor-trl-grpo.yaml', ws, { 'resources.partition': 'debug', 'env.MEDRL_STANDIN_CRASH_AT_STEP': '2', 'env.MEDRL_STANDIN_EXIT_CODE': '5' });
    const a = (await submitRun(request(ws, host, crash.spec, crash.text))).record;
    const failed = await waitForState(host, ws.runsDir, a.id, ['failed', 'succeeded', 'lost'], 60_000);
    assert.equal(failed.state, 'failed', failed.reason);
    assert.equal(failed.exitCode, 5);
    const hang = adaptExample('doctor-trl-grpo.yaml', ws, { 'resources.partition': 'debug', 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const b = (await submitRun(request(ws, host, hang.spec, hang.text))).record;
    await waitForState(host, ws.runsDir, b.id, ['running'], 60_000);
    await cancelRun(host, b);
    const cancelled = await waitForState(host, ws.runsDir, b.id, ['cancelled', 'failed', 'lost'], 60_000);
    assert.equal(cancelled.state, 'cancelled');
  });
});
