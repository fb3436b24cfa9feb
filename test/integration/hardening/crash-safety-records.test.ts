/**
 * What keeps runs from being lost, one fault at a time, on real processes and a real single-node Slurm: a start whose
 * reply is lost, a submit interrupted before or after run.json, a process group in run.json that is not the run's,
 * the modes of everything a run writes, and the keys Slurm keeps.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { createRunFolder, prepareRun, startRunFolder } from '../../../src/core/runs/submit-run';
import { sshScheduler } from '../../../src/core/runs/ssh-scheduler';
import { listRuns } from '../../../src/core/runs/list-runs';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { RUN_FILES, type RunRecord } from '../../../src/core/runs/run-record';
import type { Scheduler } from '../../../src/core/runs/scheduler';
import { useSlurmCluster } from '../fixtures/slurm';
import { adaptExample, makeWorkspace, request, submitRun, waitForState } from '../runs/run-fixture';

const host = new LocalHost();
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const mode = (p: string) => statSync(p).mode & 0o777;

describe('crash safety, fault by fault (local host, real Slurm)', () => {
  const cluster = useSlurmCluster();

  it('a start whose reply is lost keeps its folder; job.sh recorded itself, so the job is listed running and cancel stops it', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const run = await prepareRun(request(ws, host, spec, text));
    assert.ok(await createRunFolder(host, run.record, true));
    // The job starts; the reply never arrives (a dropped connection), so run.json never gets its pid.
    const lossy: Scheduler = {
      ...sshScheduler,
      start: async (h, r, s) => {
        await sshScheduler.start(h, r, s);
        throw new Error('connection lost');
      },
    };
    await assert.rejects(
      startRunFolder(host, { ...run, scheduler: lossy }, ''),
      /connection lost\nThe run folder .* is kept: if the job started, `medrl runs` lists it/,
    );
    assert.ok(existsSync(run.dir), 'the folder of a job that may be running is not deleted');
    assert.equal((JSON.parse(readFileSync(join(run.dir, RUN_FILES.record), 'utf8')) as RunRecord).pid, undefined);
    const running = await waitForState(host, ws.runsDir, run.id, ['running', 'failed', 'lost']);
    assert.equal(running.state, 'running', running.reason);
    assert.ok(running.record.pgid! > 1 && alive(running.record.pgid!), 'the pid job.sh recorded is its live process group');
    await cancelRun(host, running.record);
    const done = await waitForState(host, ws.runsDir, run.id, ['cancelled', 'failed', 'lost']);
    assert.equal(done.state, 'cancelled');
    assert.equal(alive(running.record.pgid!), false);
  });

  it('a submit cut off after run.json lists as submitting, then as failed to submit; cancelled before it starts, a job never runs', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const run = await prepareRun(request(ws, host, spec, text));
    assert.ok(await createRunFolder(host, run.record, true));
    const fresh = (await listRuns(host, ws.runsDir)).runs.find((r) => r.record.id === run.id);
    assert.deepEqual([fresh?.state, fresh?.reason], ['queued', 'submitting: the job has not started yet']);
    // Cancelled while its submit was still writing: the job the submit then starts sees the marker and does not run.
    await cancelRun(host, fresh!.record);
    for (const [name, content] of Object.entries(run.files)) await host.writeFile(join(run.dir, name), content, { mode: 0o700 });
    await sshScheduler.start(host, run, '');
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(run.dir, RUN_FILES.exitCode))) {
      assert.ok(Date.now() < deadline, 'job.sh ended');
      await new Promise((r) => setTimeout(r, 100));
    }
    const cancelled = (await listRuns(host, ws.runsDir)).runs.find((r) => r.record.id === run.id);
    assert.deepEqual([cancelled?.state, cancelled?.exitCode], ['cancelled', 130]);
    assert.equal(readFileSync(join(run.dir, RUN_FILES.log), 'utf8'), 'medrl: cancelled before it started\n');
    // One whose submit died before starting anything, two minutes on.
    const old = { ...run.record, id: `${run.id}-old`, dir: `${run.dir}-old`, created: new Date(Date.now() - 600_000).toISOString() };
    assert.ok(await createRunFolder(host, old, true));
    const failed = (await listRuns(host, ws.runsDir)).runs.find((r) => r.record.id === old.id);
    assert.deepEqual(
      [failed?.state, failed?.reason],
      ['failed', 'failed to submit: the submit was interrupted before the job started (nothing ran)'],
    );
  });

  it('folders without run.json are reported: one an interrupted submit left is swept after a minute, any other is kept', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const run = await prepareRun(request(ws, host, spec, text));
    // Folders the submit's own command made (markers and all), cut back to what a kill at each point leaves.
    for (const d of ['cut-1', 'cut-2', 'fresh-3', 'mine-4']) {
      assert.ok(await createRunFolder(host, { ...run.record, id: d, dir: join(ws.runsDir, d) }, true));
      unlinkSync(join(ws.runsDir, d, RUN_FILES.record));
    }
    writeFileSync(join(ws.runsDir, 'cut-2', 'run.json.tmp'), '{"id":');
    writeFileSync(join(ws.runsDir, 'mine-4', 'notes.txt'), 'keep me');
    mkdirSync(join(ws.runsDir, 'other-5'));
    const past = new Date(Date.now() - 120_000);
    for (const d of ['cut-1', 'cut-2', 'mine-4', 'other-5']) utimesSync(join(ws.runsDir, d), past, past);
    const listing = await listRuns(host, ws.runsDir);
    const said = Object.fromEntries(listing.problems.map((p) => [p.file!.slice(ws.runsDir.length + 1), p.message]));
    assert.match(said['cut-1'] ?? '', /interrupted submit .* no job was ever started from it: removed/);
    assert.match(said['cut-2'] ?? '', /removed/);
    assert.match(said['fresh-3'] ?? '', /no run\.json yet: a submit is creating this run folder/);
    assert.match(said['mine-4'] ?? '', /without run\.json .*kept/);
    assert.match(said['other-5'] ?? '', /no submit made here.*left as it is/);
    assert.deepEqual(readdirSync(ws.runsDir).sort(), ['fresh-3', 'mine-4', 'other-5']);
  });

  it("cancel signals only the run's own process group: pgid 1 and another group are refused and nothing is signalled", async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws, { 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const { record } = await submitRun(request(ws, host, spec, text));
    await waitForState(host, ws.runsDir, record.id, ['running']);
    // A refused cancel still leaves its `cancelled` marker: wait until job.sh is past its check (it has opened output.log),
    // so the job this test expects to keep running has really started.
    for (const until = Date.now() + 30_000; !existsSync(join(record.dir, RUN_FILES.log));) {
      if (Date.now() > until) throw new Error(`${record.dir}: no output.log 30 s after the job started`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await assert.rejects(cancelRun(host, { ...record, pgid: 1 }), /gives process group 1, which no job has: nothing was signalled/);
    const other = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    try {
      await assert.rejects(
        cancelRun(host, { ...record, pgid: other.pid! }),
        /is not its job's: no process in it runs .*job\.sh or has MEDRL_RUN_DIR=.*nothing was signalled/,
      );
      assert.ok(alive(other.pid!), 'the other group was not signalled');
    } finally {
      process.kill(-other.pid!, 'SIGKILL');
    }
    assert.ok(alive(record.pgid!), 'the run is still running');
    await cancelRun(host, record);
    assert.equal((await waitForState(host, ws.runsDir, record.id, ['cancelled', 'failed', 'lost'])).state, 'cancelled');
    assert.equal(alive(record.pgid!), false);
  });

  it('a group left with only its ended job.sh, never reaped (a container without an init), is nothing to stop, not a stranger', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.equal((await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 60_000)).state, 'succeeded');
    // A process group whose one member has exited and is a zombie: its parent (exec'd into sleep) never waits for it.
    // The member exits only once its parent is sleep: a shell still running could reap it first (seen under load).
    const parent = spawn(
      'sh',
      ['-c', `setsid sh -c 'until [ "$(cat /proc/$PPID/comm)" = sleep ]; do sleep 0.02; done' & echo $!; exec sleep 30`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const zombie = Number((await new Promise<Buffer>((r) => parent.stdout.once('data', r))).toString().trim());
      for (
        const until = Date.now() + 10_000;
        spawnSync('ps', ['-o', 'stat=', '-p', String(zombie)], { encoding: 'utf8' }).stdout.trim()[0] !== 'Z';
      ) {
        if (Date.now() > until) throw new Error(`process ${zombie} did not become a zombie`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await cancelRun(host, { ...record, pgid: zombie });
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a run folder and everything the job writes in it are private to the user (0700 folders, 0600 files)', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('local-demo.yaml', ws);
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.equal((await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 60_000)).state, 'succeeded');
    assert.equal(mode(ws.runsDir), 0o700, 'the runs folder it created');
    assert.equal(mode(record.dir), 0o700);
    for (const f of [RUN_FILES.record, RUN_FILES.spec, RUN_FILES.log, RUN_FILES.exitCode, RUN_FILES.started, RUN_FILES.metrics])
      assert.equal(mode(join(record.dir, f)), 0o600, f);
    for (const f of [RUN_FILES.launch, 'job.sh']) assert.equal(mode(join(record.dir, f)), 0o700, f);
    const dumps = readdirSync(join(record.dir, RUN_FILES.rollouts));
    assert.ok(dumps.length > 0);
    assert.equal(mode(join(record.dir, RUN_FILES.rollouts)), 0o700, 'the rollout dump folder');
    for (const f of dumps) assert.equal(mode(join(record.dir, RUN_FILES.rollouts, f)), 0o600, `rollouts/${f}`);
  });

  it("Slurm: the job gets its keys, but they are in no file of Slurm's state and are gone from the run folder once it starts", async () => {
    const ws = makeWorkspace();
    const secret = 'hf_slurmsecret4711';
    const { spec, text } = adaptExample('local-demo.yaml', ws, {
      scheduler: 'slurm',
      'resources.partition': 'debug',
      'env.MEDRL_STANDIN_HANG_AT_STEP': '2',
      setup: ['echo "medrl-test hf=${#HF_TOKEN}"'],
    });
    const { record } = await submitRun(request(ws, host, spec, text, { runEnv: { vars: {}, secrets: { HF_TOKEN: secret } } }));
    await waitForState(host, ws.runsDir, record.id, ['running'], 60_000);
    const deadline = Date.now() + 30_000;
    while (
      !/medrl-test hf=/.test(existsSync(join(record.dir, RUN_FILES.log)) ? readFileSync(join(record.dir, RUN_FILES.log), 'utf8') : '')
    ) {
      assert.ok(Date.now() < deadline, 'the job wrote its log');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(readFileSync(join(record.dir, RUN_FILES.log), 'utf8'), new RegExp(`^medrl-test hf=${secret.length}$`, 'm'));
    assert.equal(existsSync(join(record.dir, RUN_FILES.secrets)), false, 'the job deleted secrets.env when it started');
    // slurmctld keeps each job's script and environment under StateSaveLocation while it knows the job.
    const state = spawnSync('grep', ['-rl', secret, join(cluster.dir, 'state'), join(cluster.dir, 'spool'), record.dir], {
      encoding: 'utf8',
    });
    assert.equal(state.stdout, '', `files holding the key: ${state.stdout}`);
    const env = spawnSync('grep', ['-rl', record.id, join(cluster.dir, 'state')], { encoding: 'utf8' });
    assert.notEqual(env.stdout, '', "Slurm does keep the job's script (what the check above looks through)");
    await cancelRun(host, record);
    assert.equal((await waitForState(host, ws.runsDir, record.id, ['cancelled', 'failed', 'lost'], 60_000)).state, 'cancelled');
  });
});
