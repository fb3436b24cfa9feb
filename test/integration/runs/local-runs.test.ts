import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { LocalHost } from '../../../src/core/remote/local-host';
import { listRuns } from '../../../src/core/runs/list-runs';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { followLog } from '../../../src/core/runs/follow-log';
import { LocatedError } from '../../../src/core/errors/located-error';
import { ROOT, STANDIN_SETUP, adaptExample, makeWorkspace, request, submitRun, waitForState } from './run-fixture';

const host = new LocalHost();
const examples = readdirSync(join(ROOT, 'configs')).filter((f) => f.endsWith('.yaml'));

function alive(pid: number): boolean {
  return spawnSync('kill', ['-0', String(pid)]).status === 0;
}

describe('runs on the local host with the stand-in trainers (detached processes)', () => {
  for (const file of examples) {
    it(`${file}: submitted, runs, succeeds, and leaves the trainer's outputs in its run folder`, async () => {
      const ws = makeWorkspace();
      const { spec, text } = adaptExample(file, ws, { scheduler: 'ssh' });
      const { record } = await submitRun(request(ws, host, spec, text));
      assert.equal(record.scheduler, 'ssh');
      assert.ok(record.pid && record.pgid, 'pid and pgid recorded in run.json');
      const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost']);
      assert.equal(done.state, 'succeeded', done.logTail);
      assert.equal(done.exitCode, 0);
      const files = readdirSync(record.dir);
      for (const f of ['spec.yaml', 'launch.sh', 'run.json', 'output.log', 'exit_code'])
        assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
      assert.equal(readFileSync(join(record.dir, 'spec.yaml'), 'utf8'), text, 'the spec as submitted');
      const log = readFileSync(join(record.dir, 'output.log'), 'utf8');
      assert.match(log.split('\n')[0]!, /stand-in/, 'the first log line says it is a stand-in');
      if (spec.framework === 'verl') {
        if (STANDIN_SETUP.some((l) => l.includes('MEDRL_STANDIN_VERL_CODE')))
          assert.match(
            log,
            /^verl 0\.7\.0\.dev's own code accepted the launch line \(hydra compose, verl\.utils\.config\.validate_config\)$/m,
          );
        if (spec.rollout?.agentLoop) {
          // DiagAgent and MEDEC: the agent loop went with the run with the module it imports, and verl finds it through
          // the config and PYTHONPATH.
          const loop = spec.rollout.agentLoop;
          const module = basename(loop.path, '.py');
          assert.equal(
            readFileSync(join(record.dir, 'agent/agent_loops.yaml'), 'utf8'),
            `- name: medrl_agent_loop\n  _target_: ${module}.${loop.class}\n`,
          );
          assert.ok(existsSync(join(record.dir, 'agent', `${module}.py`)));
          assert.ok(existsSync(join(record.dir, 'agent/chat_turns.py')), 'the shared module it imports');
          const launch = readFileSync(join(record.dir, 'launch.sh'), 'utf8');
          assert.match(launch, /actor_rollout_ref\.rollout\.agent\.default_agent_loop=medrl_agent_loop/);
          assert.ok(launch.includes(`export PYTHONPATH=${join(record.dir, 'reward')}:${join(record.dir, 'agent')}`), launch);
        }
        assert.equal(done.progress.step, 4, 'last step read from the log tail');
        assert.match(log, /^\(TaskRunner pid=\d+, ip=[\d.]+\) step:4 - /m);
        const metrics = readFileSync(join(record.dir, 'metrics.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { step: number; data: Record<string, number> });
        assert.deepEqual(
          metrics.map((m) => m.step),
          [0, 1, 2, 3, 4],
        );
        assert.equal(typeof metrics[1]!.data['critic/score/mean'], 'number');
        const rollouts = readFileSync(join(record.dir, 'rollouts/1.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { input: string; score: number; pred: string });
        const n = spec.rollout?.n ?? 1;
        assert.equal(rollouts.length % n, 0);
        // As verl dumps them: a GRPO group is the n lines with one input, reordered by balance_batch; no special tokens.
        const perInput = new Map<string, number>();
        for (const r of rollouts) perInput.set(r.input, (perInput.get(r.input) ?? 0) + 1);
        assert.ok(
          [...perInput.values()].every((c) => c % n === 0),
          'each prompt has n responses',
        );
        assert.ok(
          rollouts.every((r) => !r.input.includes('<|im_start|>') && /^user\n/m.test(r.input)),
          'decoded without special tokens, role words kept',
        );
        assert.ok(
          rollouts.every((r) => typeof r.pred === 'string'),
          'the real reward function ran: its extra keys are in the dump',
        );
        assert.ok(existsSync(join(record.dir, 'validation/0.jsonl')));
        if (spec.overrides?.['trainer.save_freq'] !== undefined) {
          assert.equal(readFileSync(join(record.dir, 'checkpoints/latest_checkpointed_iteration.txt'), 'utf8'), '4');
          assert.ok(existsSync(join(record.dir, 'checkpoints/global_step_4/actor')));
        }
      } else {
        assert.match(log, /^\{'loss': '[\d.]+', /m, 'TRL dict log lines, transformers 5 style');
        assert.match(log, /Writing model shards: 100%\|█+\| 1\/1 /, 'each save draws its bar');
        assert.ok(existsSync(join(record.dir, 'output/config.json')), 'the final model in output/');
        const state = JSON.parse(readFileSync(join(record.dir, 'output/checkpoint-4/trainer_state.json'), 'utf8')) as {
          global_step: number;
          log_history: { step: number }[];
        };
        assert.equal(state.global_step, 4);
        assert.deepEqual(
          state.log_history.map((h) => h.step),
          [1, 2, 3, 4],
        );
      }
    });
  }

  it("a crash is a failed run with the trainer's exit code", async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, {
      'env.MEDRL_STANDIN_CRASH_AT_STEP': '2',
      'env.MEDRL_STANDIN_EXIT_CODE': '3',
    });
    const { record } = await submitRun(request(ws, host, spec, text));
    const done = await waitForState(host, ws.runsDir, record.id, ['failed', 'succeeded', 'lost']);
    assert.equal(done.state, 'failed');
    assert.equal(done.exitCode, 3);
    assert.equal(done.progress.step, 1);
    assert.match(done.logTail, /crash requested at step 2/);
  });

  it('cancel stops the whole process group and the run reads as cancelled; a killed job with no exit_code is lost', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'env.MEDRL_STANDIN_HANG_AT_STEP': '2' });
    const a = (await submitRun(request(ws, host, spec, text))).record;
    const b = (await submitRun(request(ws, host, spec, text))).record;
    await waitForState(host, ws.runsDir, a.id, ['running']);
    await waitForState(host, ws.runsDir, b.id, ['running']);
    await cancelRun(host, a);
    const cancelled = await waitForState(host, ws.runsDir, a.id, ['cancelled', 'lost', 'failed']);
    assert.equal(cancelled.state, 'cancelled');
    assert.equal(alive(a.pid!), false, 'the job process is gone');
    // A machine reboot or an OOM kill: the job dies without writing exit_code.
    process.kill(-b.pgid!, 'SIGKILL');
    const lost = await waitForState(host, ws.runsDir, b.id, ['lost', 'failed']);
    assert.equal(lost.state, 'lost');
    assert.match(lost.reason ?? '', /without writing exit_code/);
  });

  it('two quick submits of one spec get two run folders', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const now = new Date();
    const [a, b] = await Promise.all([
      submitRun(request(ws, host, spec, text, { now })),
      submitRun(request(ws, host, spec, text, { now })),
    ]);
    assert.notEqual(a.record.id, b.record.id);
    assert.equal(readdirSync(ws.runsDir).length, 2);
    await waitForState(host, ws.runsDir, a.record.id, ['succeeded']);
    await waitForState(host, ws.runsDir, b.record.id, ['succeeded']);
  });

  it('host checks fail before anything is written: missing data, no GPUs, framework not importable', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'data.train': 'data/nope.parquet', 'resources.gpusPerNode': 2 });
    const noStandins = { ...ws.hostConfig, setup: [] };
    const err = await submitRun(request(ws, host, spec, text, { hostConfig: noStandins })).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof LocatedError, String(err));
    const fields = err.problems.map((p) => p.field).sort();
    assert.deepEqual(fields, ['data.train', 'framework', 'resources.gpusPerNode']);
    assert.match(err.problems.find((p) => p.field === 'data.train')!.message, /data\/nope\.parquet does not exist on local/);
    assert.equal(existsSync(ws.runsDir), false, 'no run folder');
  });

  it('secrets reach the job over stdin and are in no file of the run folder', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const secret = `sk-${Date.now()}-'quoted' $(not run)`;
    const runEnv = { vars: { MEDRL_JUDGE_URL: 'http://127.0.0.1:8082/v1' }, secrets: { MEDRL_JUDGE_API_KEY: secret } };
    const digest = createHash('sha256').update(secret).digest('hex');
    writeFileSync(
      join(ws.dir, 'configs/rewards/multiple_choice_exact.py'),
      `import hashlib, os\nassert hashlib.sha256(os.environ["MEDRL_JUDGE_API_KEY"].encode()).hexdigest() == "${digest}"\nassert os.environ["MEDRL_JUDGE_URL"].startswith("http")\n${readFileSync(join(ROOT, 'configs/rewards/multiple_choice_exact.py'), 'utf8')}`,
    );
    const { record } = await submitRun(request(ws, host, spec, text, { runEnv }));
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost']);
    assert.equal(done.state, 'succeeded', done.logTail);
    const found = spawnSync('grep', ['-rl', secret.slice(0, 16), record.dir], { encoding: 'utf8' });
    assert.equal(found.stdout, '', `files with the secret: ${found.stdout}`);
  });

  it('logs are followed live from a byte offset until the run ends', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'env.MEDRL_STANDIN_STEP_SECONDS': '0.3' });
    const { record } = await submitRun(request(ws, host, spec, text));
    const lines: string[] = [];
    const until = async () =>
      ['succeeded', 'failed', 'lost', 'cancelled'].includes(
        (await listRuns(host, ws.runsDir)).runs.find((r) => r.record.id === record.id)!.state,
      );
    for await (const line of followLog(host, record.dir, { until, pollMs: 100 })) lines.push(line);
    assert.match(lines[0]!, /stand-in/);
    assert.ok(
      lines.some((l) => /step:4 - /.test(l)),
      'the last step arrived while following',
    );
    assert.equal(lines.join('\n') + '\n', readFileSync(join(record.dir, 'output.log'), 'utf8'), 'every line exactly once');
  });

  it('a broken run.json is reported with its path and the other runs still list', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const { record } = await submitRun(request(ws, host, spec, text));
    await waitForState(host, ws.runsDir, record.id, ['succeeded']);
    const broken = join(ws.runsDir, 'broken-20260101-000000-abcdef');
    execFileSync('mkdir', ['-p', broken]);
    writeFileSync(join(broken, 'run.json'), '{"id": "broken", oops');
    const listing = await listRuns(host, ws.runsDir);
    assert.equal(listing.runs.length, 1);
    assert.equal(listing.problems.length, 1);
    assert.equal(listing.problems[0]!.file, join(broken, 'run.json'));
    assert.match(listing.problems[0]!.message, /not valid JSON/);
    rmSync(broken, { recursive: true });
  });

  it('a pretty-printed run.json lists like a one-line one, pid and all', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const { record } = await submitRun(request(ws, host, spec, text));
    await waitForState(host, ws.runsDir, record.id, ['succeeded']);
    // A finished run written by hand with an indent, and one whose pid (this test's own process) is alive.
    const write = (id: string, extra: object, exitCode?: string) => {
      const dir = join(ws.runsDir, id);
      execFileSync('mkdir', ['-p', dir]);
      writeFileSync(join(dir, 'run.json'), `${JSON.stringify({ ...record, id, dir, ...extra }, null, 2)}\n`);
      if (exitCode !== undefined) writeFileSync(join(dir, 'exit_code'), exitCode);
    };
    write('pretty-done-20260101-000000-aaaaaa', {}, '0');
    write('pretty-live-20260101-000000-bbbbbb', { pid: process.pid, pgid: process.pid });
    const listing = await listRuns(host, ws.runsDir);
    assert.deepEqual(listing.problems, []);
    const state = (id: string) => listing.runs.find((r) => r.record.id === id)?.state;
    assert.equal(state('pretty-done-20260101-000000-aaaaaa'), 'succeeded');
    assert.equal(state('pretty-live-20260101-000000-bbbbbb'), 'running');
  });
});
