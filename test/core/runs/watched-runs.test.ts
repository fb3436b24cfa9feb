import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import type { RunInfo } from '../../../src/core/runs/list-runs';
import type { RunState } from '../../../src/core/runs/run-record';
import {
  activeRunsSummary,
  endedMessage,
  lastHeadline,
  logExcerpt,
  parseWatched,
  runsToAnnounce,
  storedWatched,
  type ListedHost,
  type WatchedRun,
} from '../../../src/core/runs/watched-runs';
import { MetricsCache } from '../../../src/core/metrics/metrics-cache';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { CountingHost } from '../../fixtures/counting-host';
import { writeDenseVerlSteps } from '../metrics/verl-log-generator';

function run(id: string, state: RunState, more: Partial<RunInfo> & { kind?: 'train' | 'service'; dir?: string } = {}): RunInfo {
  const { kind = 'train', dir = `/runs/${id}`, ...rest } = more;
  return {
    host: 'gpubox',
    record: {
      id,
      name: id.split('-')[0]!,
      kind,
      framework: 'verl',
      algorithm: 'grpo',
      host: 'gpubox',
      scheduler: 'ssh',
      created: '2026-01-01T00:00:00Z',
      dir,
    },
    state,
    logSize: 0,
    logTail: '',
    progress: { metrics: [] },
    ...rest,
  };
}

const listed = (runs: RunInfo[], error?: string): ListedHost => ({ host: { name: 'gpubox' }, runs, ...(error ? { error } : {}) });
const watched = (id: string, since = 0): WatchedRun => ({ host: 'gpubox', id, since });

describe('which watched runs to announce', () => {
  it('announces a run that ended, keeps one still active, and asks for no refresh once none waits', () => {
    const r = runsToAnnounce([watched('a'), watched('b')], [listed([run('a', 'succeeded'), run('b', 'running')])], 10);
    assert.deepEqual(
      r.announce.map((a) => (a.kind === 'ended' ? a.run.record.id : a.kind)),
      ['a'],
    );
    assert.deepEqual(r.waiting, [watched('b')]);
    assert.equal(r.retry, true);
    const after = runsToAnnounce(r.waiting, [listed([run('b', 'failed')])], 20);
    assert.equal(after.announce.length, 1);
    assert.deepEqual(after.waiting, []);
    assert.equal(after.retry, false);
  });

  it('keeps waiting while its host cannot be asked, or is not in the listing (no medrl.yaml yet, untrusted)', () => {
    const down = runsToAnnounce([watched('a')], [listed([run('a', 'succeeded')], 'connection refused')], 10);
    assert.deepEqual(
      [down.announce, down.waiting, down.retry],
      [[], [watched('a')], true],
      'stale runs of an unreachable host say nothing',
    );
    const none = runsToAnnounce([watched('a')], [], 10);
    assert.deepEqual([none.announce, none.waiting, none.retry], [[], [watched('a')], false]);
  });

  it('a listing that began before the run was watched cannot say it is gone; a later one can', () => {
    const early = runsToAnnounce([watched('a', 100)], [listed([])], 99);
    assert.deepEqual([early.announce, early.waiting, early.retry], [[], [watched('a', 100)], true]);
    const later = runsToAnnounce([watched('a', 100)], [listed([])], 100);
    assert.deepEqual(later.announce, [{ kind: 'gone', watched: watched('a', 100) }]);
    assert.deepEqual(later.waiting, []);
  });

  it('keeps hosts and ids only across reloads, and drops anything else read back', () => {
    const kept = storedWatched([watched('a', 123)]);
    assert.deepEqual(kept, [{ host: 'gpubox', id: 'a' }]);
    assert.deepEqual(parseWatched(JSON.parse(JSON.stringify(kept))), [watched('a', 0)]);
    assert.deepEqual(parseWatched([{ host: 'x' }, null, 3, { host: 'h', id: 'i', extra: 1 }]), [{ host: 'h', id: 'i', since: 0 }]);
    assert.deepEqual(parseWatched(undefined), []);
    assert.deepEqual(parseWatched({ host: 'h', id: 'i' }), []);
  });
});

describe('the status bar summary of active runs', () => {
  it('counts queued and running runs (not services), one tooltip line each with its step', () => {
    const running = run('grpo-1', 'running', {
      progress: { step: 3, totalSteps: 10, metrics: [{ id: 'reward', title: 'Reward', key: 'critic/score/mean', value: 0.5 }] },
    });
    const s = activeRunsSummary([
      running,
      run('sft-2', 'queued'),
      run('done-3', 'succeeded'),
      run('vllm-4', 'running', { kind: 'service' }),
    ]);
    assert.deepEqual(s, { text: '2 runs', tooltip: 'grpo · running · gpubox · step 3/10 · reward 0.500\nsft · queued · gpubox' });
    assert.equal(activeRunsSummary([run('a', 'running')])?.text, '1 run');
    assert.equal(activeRunsSummary([run('a', 'failed'), run('vllm', 'running', { kind: 'service' })]), undefined);
  });
});

describe('the notification when a run ends', () => {
  it('a succeeded run with its last reward; a diverged one shows NaN', () => {
    const done = run('grpo-1', 'succeeded', { exitCode: 0 });
    assert.equal(
      endedMessage(done, { title: 'reward', value: 0.73456, step: 20 }),
      'Run grpo (gpubox) succeeded · reward 0.735 at step 20',
    );
    assert.equal(endedMessage(done, { title: 'loss', value: NaN, step: 2 }), 'Run grpo (gpubox) succeeded · loss NaN at step 2');
    assert.equal(endedMessage(done), 'Run grpo (gpubox) succeeded');
  });

  it('a failed or lost run with the last lines of its log; a cancelled one plainly', () => {
    const failed = run('grpo-1', 'failed', {
      exitCode: 1,
      logTail: 'step:1 reward 0.1\nTraceback (most recent call last):\nRuntimeError: boom\n',
    });
    assert.equal(
      endedMessage(failed),
      'Run grpo (gpubox) failed (exit 1). Last lines of its log: step:1 reward 0.1 ⏎ Traceback (most recent call last): ⏎ RuntimeError: boom',
    );
    const timeout = run('grpo-1', 'failed', { reason: 'Slurm TIMEOUT' });
    assert.equal(endedMessage(timeout), 'Run grpo (gpubox) failed (Slurm TIMEOUT). Its log is empty.', 'the reason is not said twice');
    const lost = run('grpo-1', 'lost', { reason: 'process 12 ended without writing exit_code', logTail: 'Killed\n' });
    assert.equal(endedMessage(lost), 'Run grpo (gpubox) lost: process 12 ended without writing exit_code. Last lines of its log: Killed');
    assert.equal(
      endedMessage(run('grpo-1', 'cancelled', { reason: 'cancelled in Slurm' })),
      'Run grpo (gpubox) cancelled: cancelled in Slurm',
    );
  });

  it('trims the log tail: colours and control characters out, the last redraw of a bar, at most 5 lines and ~300 characters', () => {
    assert.equal(
      logExcerpt('\x1b[36m(TaskRunner pid=1)\x1b[0m ok\n 10%|#  | 1/10\r 20%|##  | 2/10\r\n\n\x07bell\n'),
      '(TaskRunner pid=1) ok\n20%|##  | 2/10\nbell',
    );
    const many = Array.from({ length: 9 }, (_, i) => `line ${i}`).join('\n');
    assert.equal(logExcerpt(many), 'line 4\nline 5\nline 6\nline 7\nline 8');
    const wide = ['a'.repeat(200), 'b'.repeat(120), 'c'.repeat(150)].join('\n');
    assert.equal(logExcerpt(wide), `${'b'.repeat(120)}\n${'c'.repeat(150)}`, 'whole lines that fit in 300 characters');
    const huge = `${'x'.repeat(500)}END`;
    const cut = logExcerpt(huge);
    assert.equal(cut.length, 300);
    assert.ok(cut.startsWith('…') && cut.endsWith('END'), 'a long last line keeps its end');
    assert.equal(logExcerpt(''), '');
  });
});

describe('the last headline of a finished run, from its metrics files', () => {
  const host = new LocalHost();

  it('verl: the last critic/score/mean of metrics.jsonl, past a validation-only record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-watch-'));
    writeFileSync(
      join(dir, 'metrics.jsonl'),
      [
        { step: 0, data: { 'val-core/pubmedqa/acc/mean@1': 0.5 } },
        { step: 1, data: { 'critic/score/mean': 0.25, 'actor/entropy': 0.7 } },
        { step: 2, data: { 'critic/score/mean': 0.625, 'actor/entropy': 0.6 } },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    assert.deepEqual(await lastHeadline(host, run('grpo-1', 'succeeded', { dir })), { title: 'reward', value: 0.625, step: 2 });
  });

  it("reads a big log through the metrics cache: the run's dashboard then reads only the cache and a few samples", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-watch-'));
    try {
      const log = join(dir, 'output.log');
      await writeDenseVerlSteps(log, 9000, { step: 9000, value: 0.875 });
      const cache = new MetricsCache(join(dir, 'cache'), { minLogBytes: 1 << 20 });
      const got = await lastHeadline(host, run('grpo-1', 'succeeded', { dir }), cache);
      assert.deepEqual(got, { title: 'reward', value: 0.875, step: 9000 });
      const counting = new CountingHost();
      const dashboard = new MetricsFollower(counting, log, undefined, cache);
      await dashboard.poll();
      assert.equal(dashboard.series.length, 9000);
      assert.ok(counting.bytesRead < 256 << 10, `the dashboard read ${counting.bytesRead} bytes of a 23 MB log`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('TRL GRPO (a real run folder): the last `reward` TRL itself recorded in trainer_state.json', async () => {
    const runs = join(__dirname, '../../fixtures/trl-real/medrl/runs');
    const id = readdirSync(runs).find((d) => d.startsWith('gpu-grpo-fn-'))!;
    const dir = join(runs, id);
    const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunInfo['record'];
    const out = join(dir, 'output');
    const last = readdirSync(out)
      .filter((f) => /^checkpoint-\d+$/.test(f))
      .sort((a, b) => Number(a.slice(11)) - Number(b.slice(11)))
      .pop()!;
    const history = (
      JSON.parse(readFileSync(join(out, last, 'trainer_state.json'), 'utf8')) as { log_history: Array<Record<string, number>> }
    ).log_history;
    const logged = history.filter((h) => typeof h.reward === 'number').pop()!;
    const got = await lastHeadline(host, { ...run(id, 'succeeded'), record: { ...record, dir } });
    assert.equal(got?.title, 'reward');
    assert.equal(got?.step, logged.step);
    assert.ok(Math.abs(got!.value - logged.reward!) < 1e-6, `${got?.value} vs ${logged.reward}`);
  });
});
