import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { listRuns } from '../../../src/core/runs/list-runs';
import { RAY_JOBS } from '../../../src/core/runs/ray-scheduler';
import { adaptExample, makeWorkspace, request, submitRun, waitForState } from './run-fixture';

// Ray's job server cannot run here (Ray's dashboard needs packages this machine cannot install): the Ray scheduler's
// submit, status, logs and stop are tested against the stand-in job CLI (standins/bin/ray), which prints exactly Ray's
// job CLI output and keeps its jobs in a folder. ray-node-files.test.ts submits to a real two-node cluster through it.
const host = new LocalHost();

describe('the ray scheduler against the stand-in ray job CLI', () => {
  before(() => {
    process.env.MEDRL_STANDIN_RAY_DIR = mkdtempSync(join(tmpdir(), 'medrl-ray-'));
    // Submit records the `ray` it used under $HOME/.medrl/ray-jobs: a home of the test's own.
    process.env.HOME = mkdtempSync(join(tmpdir(), 'medrl-ray-home-'));
  });

  it('the ECG QA LoRA spec is submitted with ray job submit --no-wait, runs and succeeds', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, { 'env.MEDRL_STANDIN_STEP_SECONDS': '1' });
    assert.equal(spec.scheduler, 'ray');
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.equal(record.jobId, record.id, 'the run id is the Ray submission id');
    const recorded = readFileSync(join(process.env.HOME!, RAY_JOBS, record.id), 'utf8').split('\n');
    assert.equal(recorded[0], join(process.cwd(), 'standins/bin/ray'), 'submit records the absolute path of the ray its setup found');
    const running = await waitForState(host, ws.runsDir, record.id, ['running', 'succeeded']);
    assert.equal(running.state, 'running', 'ray job status says RUNNING');
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost']);
    assert.equal(done.state, 'succeeded', done.reason);
    assert.match(readFileSync(join(record.dir, 'launch.sh'), 'utf8'), /actor_rollout_ref\.model\.lora_rank=32/);
    // verl's workers are Ray actors: the run's variables reach them through the job's runtime_env, not launch.sh.
    const runtimeEnv = JSON.parse(readFileSync(join(record.dir, 'runtime_env.yaml'), 'utf8')) as { env_vars: Record<string, string> };
    assert.equal(runtimeEnv.env_vars.MEDRL_RUN_ID, record.id);
    assert.equal(runtimeEnv.env_vars.MEDRL_STANDIN_STEP_SECONDS, '1');
    assert.match(readFileSync(join(record.dir, 'metrics.jsonl'), 'utf8'), /"step": 4/);
  });

  it('a failing job is failed with its exit code; ray job stop cancels', async () => {
    const ws = makeWorkspace();
    const crash = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, {
      'env.MEDRL_STANDIN_CRASH_AT_STEP': '1',
      'env.MEDRL_STANDIN_EXIT_CODE': '7',
    });
    const a = (await submitRun(request(ws, host, crash.spec, crash.text))).record;
    const failed = await waitForState(host, ws.runsDir, a.id, ['failed', 'succeeded', 'lost']);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.exitCode, 7);
    const hang = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws, { 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const b = (await submitRun(request(ws, host, hang.spec, hang.text))).record;
    await waitForState(host, ws.runsDir, b.id, ['running']);
    await cancelRun(host, b);
    const cancelled = await waitForState(host, ws.runsDir, b.id, ['cancelled', 'failed', 'lost']);
    assert.equal(cancelled.state, 'cancelled');
  });

  it('API keys cannot reach a Ray job without a file or a command line: the submit is refused and leaves no run', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('ecg-qa-verl-grpo-lora.yaml', ws);
    await assert.rejects(
      submitRun(request(ws, host, spec, text, { runEnv: { vars: {}, secrets: { MEDRL_JUDGE_API_KEY: 'k' } } })),
      /cannot pass API keys/,
    );
    assert.deepEqual(existsSync(ws.runsDir) ? readdirSync(ws.runsDir) : [], []);
  });

  it('listing and cancelling a Ray run never source its setup.sh: a run folder a workspace wrote runs nothing', async () => {
    const ws = makeWorkspace();
    const canary = join(ws.dir, 'canary');
    // What a hostile repository can put under a runsDir its medrl.yaml names: run.json saying ray, and a setup.sh.
    const dir = join(ws.runsDir, 'evil-run');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({
        id: 'evil-run',
        name: 'x',
        kind: 'train',
        framework: 'verl',
        algorithm: 'grpo',
        host: 'local',
        scheduler: 'ray',
        created: new Date().toISOString(),
        dir,
        jobId: 'evil-run',
      }),
    );
    writeFileSync(join(dir, 'setup.sh'), `touch ${canary}\nray() { touch ${canary}; }\n`);
    const run = (await listRuns(host, ws.runsDir)).runs.find((r) => r.record.id === 'evil-run');
    assert.equal(run?.state, 'lost');
    assert.match(run?.reason ?? '', /no ray recorded for this run/);
    await assert.rejects(cancelRun(host, run!.record), /no ray recorded/);
    assert.equal(existsSync(canary), false, 'setup.sh ran');
  });
});
