import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricsCache } from '../../../src/core/metrics/metrics-cache';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { SshHost } from '../../../src/core/remote/ssh-host';
import { openMetricsSource, type MetricsSource } from '../../../src/core/metrics/run-metrics';
import { errorMessage } from '../../../src/core/errors/located-error';
import { writeDenseVerlLog } from '../../core/metrics/verl-log-generator';
import { bytesOf, denseSteps, ReadLog, StepsAdded, stepRange } from '../../core/metrics/live-tail-fixture';

/** What one of the dashboard's polls does (src/vscode/metrics/dashboard-panel.ts, pollOne): the steps it sends, or its error. */
async function dashboardPoll(src: MetricsSource, added: StepsAdded): Promise<{ steps: number[] } | { error: string }> {
  try {
    const ended = src.ended ? await src.ended() : false;
    await src.poll({ live: true, final: ended });
    return { steps: added.take() };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

async function until(what: string, ms: number, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('following a growing dense verl log over SSH (a real sshd on loopback) while the connection drops', () => {
  let sshd: SshdFixture;
  let host: SshHost;
  let log: ReadLog;
  let file: string;
  let src: MetricsSource;
  const added = new StepsAdded(() => src.series);
  let steps: number;

  before(async () => {
    sshd = await startSshd();
    // The client notices a silent server after 3 unanswered keepalives (300 ms apart), and gives up connecting after 1 s.
    host = sshd.makeHost({ name: 'gpu', context: { ...sshd.context(), keepaliveIntervalMs: 300, connectTimeoutMs: 1000 } });
    log = new ReadLog(host);
    const dir = join(sshd.remoteHome, '.medrl/runs/dense-grpo');
    mkdirSync(dir, { recursive: true });
    file = join(dir, 'output.log');
    steps = await writeDenseVerlLog(file, 20_000 * 2110);
    // A run folder, as the dashboard follows it.
    src = await openMetricsSource(host, dir);
    const first = await dashboardPoll(src, added);
    assert.deepEqual(first, { steps: stepRange(1, steps) });
    log.take();
  });
  after(async () => {
    await host.dispose();
    await sshd.stop();
  });

  /** Appends `n` steps; returns the file's size before them. */
  const append = (n: number): number => {
    const before = statSync(file).size;
    appendFileSync(file, denseSteps(steps + 1, steps + n));
    steps += n;
    return before;
  };

  it('dropped between polls: the next poll reconnects by itself and reads only the steps written meanwhile', async () => {
    assert.ok(sshd.killConnections() > 0, "the connection's sshd processes were killed");
    await until('the client sees the drop', 5000, () => host.state.state === 'disconnected');
    const before = append(30);
    const r = await dashboardPoll(src, added);
    assert.deepEqual(r, { steps: stepRange(steps - 29, steps) }, 'exactly the 30 new steps, none again');
    const reads = log.take();
    assert.equal(reads[0]!.start, before);
    assert.equal(bytesOf(reads), statSync(file).size - before, 'only the new bytes were read');
    assert.equal(host.state.state, 'connected');
    assert.equal(src.series.length, steps);
  });

  it('dropped mid-read: that poll says so plainly, the next reads on from the last line it parsed', async () => {
    const before = append(6000); // about 12 MB: three 4 MB ranges
    const appended = statSync(file).size - before;
    // The connection drops as the third range is asked for: it fails in flight, after the first has come back and parsed.
    let killed = 0;
    log.onStart = (start) => {
      if (start === before + 2 * (4 << 20)) killed = sshd.killConnections();
    };
    const failed = await dashboardPoll(src, added);
    log.onStart = undefined;
    assert.ok(killed > 0, "the connection's sshd processes were killed mid-poll");
    assert.ok('error' in failed, 'the poll failed');
    assert.match(failed.error, /^gpu: connection lost \(.+\) while reading \/.*\/dense-grpo\/output\.log; the next call reconnects$/);
    const failedReads = log.take();
    const r = await dashboardPoll(src, added);
    assert.deepEqual(r, { steps: stepRange(steps - 5999, steps) }, 'every new step once');
    const reads = log.take();
    assert.ok(reads[0]!.start > before, `the next poll starts at ${reads[0]!.start}, past where the append began (${before})`);
    const reread = bytesOf(failedReads) + bytesOf(reads) - appended;
    console.log(`[follow over ssh] dropped mid-read: ${bytesOf(failedReads)} + ${bytesOf(reads)} bytes read for ${appended} appended`);
    assert.ok(reread >= 0 && reread <= 2 * (4 << 20), `${reread} bytes read twice (at most the ranges in flight)`);
    assert.equal(src.series.length, steps);
  });

  it('the host silent for seconds (sshd frozen): polls fail with a plain error, then recover by themselves', async () => {
    const sshdPid = Number(readFileSync(join(sshd.dir, 'sshd.pid'), 'utf8'));
    const before = statSync(file).size;
    const seenBefore = steps;
    process.kill(sshdPid, 'SIGSTOP'); // new connections get no SSH banner
    assert.ok(sshd.signalConnections('SIGSTOP') > 0); // the open one stops answering
    const errors: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        append(10);
        const r = await dashboardPoll(src, added);
        assert.ok('error' in r, `poll ${i} failed while the host was silent`);
        errors.push(r.error);
      }
    } finally {
      process.kill(sshdPid, 'SIGCONT');
      sshd.signalConnections('SIGCONT');
    }
    console.log(`[follow over ssh] while silent:\n  ${errors.join('\n  ')}`);
    assert.match(errors[0]!, /^gpu: connection lost \(Keepalive timeout\) while reading .*; the next call reconnects$/);
    // The next polls try to connect again, each time: the SSH alias and address, and what may be wrong.
    for (const e of errors.slice(1))
      assert.match(e, new RegExp(`^${sshd.alias} \\(root@127\\.0\\.0\\.1:${sshd.port}\\): unreachable: no SSH answer within 1 s`));
    const r = await dashboardPoll(src, added);
    assert.deepEqual(r, { steps: stepRange(seenBefore + 1, steps) }, 'the 30 steps written while it was silent, once');
    const reads = log.take();
    assert.equal(reads[0]!.start, before, 'from where the last good poll ended');
    assert.equal(bytesOf(reads), statSync(file).size - before);
    assert.equal(src.series.length, steps);
    assert.equal(src.series.row(steps - 1).metrics['training/global_step'], steps);
  });

  it('opened again with the metrics cache, after a dropped connection: only what the log gained crosses SSH', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'medrl-metrics-cache-ssh-'));
    try {
      const problems: string[] = [];
      const cache = new MetricsCache(cacheDir, { onProblem: (m) => problems.push(m) });
      const dir = join(sshd.remoteHome, '.medrl/runs/dense-grpo');
      const first = await openMetricsSource(host, dir, { cache });
      while ((await first.poll({ maxBytes: 32 << 20 })).more);
      const parsedBytes = bytesOf(log.take());
      assert.equal(first.series.length, steps);
      // The window closed; the connection dropped; the run logged on; the dashboard is opened again.
      assert.ok(sshd.killConnections() > 0);
      await until('the client sees the drop', 5000, () => host.state.state === 'disconnected');
      const before = append(25);
      const again = await openMetricsSource(host, dir, { cache });
      await again.poll();
      const reads = log.take();
      const appended = statSync(file).size - before;
      console.log(
        `[follow over ssh] opened again from the metrics cache: ${bytesOf(reads)} bytes read over SSH (${appended} appended), ` +
          `where the first open read ${parsedBytes}`,
      );
      assert.equal(again.series.length, steps);
      assert.equal(again.series.row(steps - 1).metrics['training/global_step'], steps);
      // The suite's dashboard, followed live all along, has the same values.
      await src.poll();
      log.take();
      // Compared value by value (a deepEqual failure's diff of 20k values takes minutes to build).
      const got = again.series.column('critic/score/mean');
      const want = src.series.column('critic/score/mean');
      assert.equal(got.length, want.length);
      const differs = got.findIndex((v, i) => !Object.is(v, want[i]));
      assert.equal(differs, -1, `row ${differs}: ${got[differs]} from the cache, ${want[differs]} followed live`);
      assert.ok(bytesOf(reads) < appended + (80 << 10), 'the appended steps and the 64 KB of samples that check the log');
      assert.deepEqual(problems, []);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
