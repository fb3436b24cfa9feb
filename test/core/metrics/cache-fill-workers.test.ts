import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricsCache, type CacheFiller, type CacheFillJob } from '../../../src/core/metrics/metrics-cache';
import { CacheFillWorkers } from '../../../src/core/metrics/cache-fill-workers';
import { SeriesCharts } from '../../../src/core/metrics/chart-view';
import { assertSameSeries } from './same-series';
import { denseStepLine, seeded, writeDenseVerlSteps } from './verl-log-generator';

/** A first read of a log, and how busy it kept this thread's event loop (0: idle, 1: never free for anything else). */
async function firstRead(file: string, cache?: MetricsCache): Promise<{ f: MetricsFollower; busy: number }> {
  const f = new MetricsFollower(new LocalHost(), file, undefined, cache);
  const start = performance.eventLoopUtilization();
  await f.poll();
  return { f, busy: performance.eventLoopUtilization(start).utilization };
}

/** Parses on real workers and records how each job ended: parsed, or stopped because its signal aborted. */
class RecordingFiller implements CacheFiller {
  readonly outcomes: Array<Promise<'parsed' | 'stopped'>> = [];
  private readonly workers = new CacheFillWorkers(1);

  fill(job: CacheFillJob, signal?: AbortSignal): Promise<string[]> {
    const run = this.workers.fill(job, signal);
    this.outcomes.push(
      run.then(
        () => 'parsed',
        (err: unknown) => {
          if (signal?.aborted) return 'stopped';
          throw err;
        },
      ),
    );
    return run;
  }
}

/** What a cache folder holds: finished files and part-written ones. */
function cacheFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe('big local logs parsed into the metrics cache on worker threads', () => {
  let root: string;
  let log: string;
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'medrl-cache-fill-'));
    log = join(root, 'output.log');
    // About 36 MB: past the size below which a log is parsed on the thread that asks.
    await writeDenseVerlSteps(log, 17_000, { step: 12_345, value: 50 });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('gives the series a parse here gives, while this thread stays free, and keeps it in the cache', async () => {
    const here = await firstRead(log);
    const problems: string[] = [];
    const dir = join(root, 'cache');
    const cache = new MetricsCache(dir, { filler: new CacheFillWorkers(2), onProblem: (m) => problems.push(m) });
    const offloaded = await firstRead(log, cache);
    assertSameSeries(offloaded.f.series, here.f.series);
    assert.equal(offloaded.f.framework, 'verl');
    assert.deepEqual(problems, []);
    assert.equal(readdirSync(dir).filter((n) => n.endsWith('.bin')).length, 1, 'the worker wrote the cache file');
    assert.ok(here.busy > 0.8, `a parse here keeps the event loop busy (${here.busy.toFixed(2)})`);
    assert.ok(offloaded.busy < 0.4, `with a worker the event loop is mostly free (${offloaded.busy.toFixed(2)})`);
  });

  it('shows the first slice read here at once, then takes the whole parse: charts then show what lies past that slice', async () => {
    const here = await firstRead(log);
    const growing = join(root, 'growing.log');
    copyFileSync(log, growing);
    const cache = new MetricsCache(join(root, 'cache-sliced'), { filler: new CacheFillWorkers(1) });
    const f = new MetricsFollower(new LocalHost(), growing, undefined, cache);
    // The dashboard's reads: a 4 MB slice first, then 32 MB ones.
    assert.equal((await f.poll({ maxBytes: 4 << 20 })).more, true);
    const first = f.series.length;
    assert.ok(first > 1000 && first < 3000, `the first slice's steps (${first})`);
    const charts = new SeriesCharts(f.series);
    const reward = () => charts.line({ key: 'critic/score/mean', axis: 'step', range: null, width: 800, smoothing: 0 })!;
    assert.ok(Math.max(...reward().hi.filter((v): v is number => v !== null)) < 50, 'the spike at step 12,345 is not read yet');
    assert.equal((await f.poll({ maxBytes: 32 << 20 })).more, false);
    assertSameSeries(f.series, here.f.series);
    assert.equal(Math.max(...reward().hi.filter((v): v is number => v !== null)), 50, 'the chart shows the spike past the first slice');
    // And the log followed on from the cached parse's end.
    appendFileSync(growing, `${denseStepLine(17_001, seeded(3))}\n`);
    await f.poll();
    assert.equal(f.series.steps.at(-1), 17_001);
    assert.equal(f.series.length, 17_001);
  });

  it('reads a log the cache does not keep (an unreadable line) here, with its problem and line', async () => {
    const bad = join(root, 'bad.log');
    copyFileSync(log, bad);
    appendFileSync(bad, '(TaskRunner pid=1) step:17001 - actor/pg_loss:0.1 - critic/score/mean:oops\n');
    const dir = join(root, 'cache-bad');
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { filler: new CacheFillWorkers(1), onProblem: (m) => problems.push(m) });
    const { f } = await firstRead(bad, cache);
    assert.equal(f.series.steps.at(-1), 17_001);
    assert.equal(f.series.length, 17_001);
    const found = await f.problems();
    assert.equal(found.length, 1);
    assert.equal(found[0]!.line, 17_001 + Math.floor(17_000 / 50), 'the unreadable line, counted with the warnings');
    assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [], 'no cache file for a log with problems');
    assert.deepEqual(problems, []);
  });

  it('stops a parse nobody waits for: a job still queued never starts, a running one writes nothing', async () => {
    const dir = join(root, 'cache-stopped');
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { filler: new CacheFillWorkers(1), onProblem: (m) => problems.push(m) });
    const workers = new CacheFillWorkers(1);
    const job = (path: string): CacheFillJob => ({ dir, maxBytes: cache.maxBytes, minLogBytes: cache.minLogBytes, host: 'local', path });
    const other = join(root, 'other.log');
    copyFileSync(log, other);
    const running = new AbortController();
    const queued = new AbortController();
    const first = workers.fill(job(log), running.signal);
    const second = workers.fill(job(other), queued.signal);
    queued.abort();
    await assert.rejects(second, { name: 'AbortError' });
    running.abort();
    await assert.rejects(first, { name: 'AbortError' });
    assert.deepEqual(cacheFiles(dir), [], 'no cache file, finished or part-written');
    // The place the stopped jobs held is free again: a third job runs to its end.
    await workers.fill(job(log));
    assert.equal(cacheFiles(dir).filter((n) => n.endsWith('.bin')).length, 1);
    assert.deepEqual(problems, []);
  });

  it('stops the worker once the first slice read here shows the cache will not keep the log, and reads on here', async () => {
    // An unreadable line among the first steps: the worker's parse would hit it too, and a parse with problems is not kept.
    const bad = join(root, 'bad-early.log');
    const lines = readFileSync(log, 'utf8').split('\n');
    lines[10] = '(TaskRunner pid=1) step:11 - actor/pg_loss:0.1 - critic/score/mean:oops';
    writeFileSync(bad, lines.join('\n'));
    const filler = new RecordingFiller();
    const dir = join(root, 'cache-bad-early');
    const f = new MetricsFollower(new LocalHost(), bad, undefined, new MetricsCache(dir, { filler }));
    assert.equal((await f.poll({ maxBytes: 4 << 20 })).more, true);
    while ((await f.poll({ maxBytes: 32 << 20 })).more);
    assert.deepEqual(await Promise.all(filler.outcomes), ['stopped']);
    assert.equal(f.series.length, 17_000);
    assert.deepEqual(
      (await f.problems()).map((p) => p.line),
      [11],
    );
    assert.deepEqual(cacheFiles(dir), []);
  });

  it("stops the worker when the reads' signal aborts (the dashboard closed)", async () => {
    const filler = new RecordingFiller();
    const dir = join(root, 'cache-closed');
    const f = new MetricsFollower(new LocalHost(), log, undefined, new MetricsCache(dir, { filler }));
    const closed = new AbortController();
    assert.equal((await f.poll({ maxBytes: 4 << 20, signal: closed.signal })).more, true);
    closed.abort();
    assert.deepEqual(await Promise.all(filler.outcomes), ['stopped']);
    assert.deepEqual(cacheFiles(dir), []);
  });

  it('tells how far the first read has come, here and while the worker parses', async () => {
    const size = statSync(log).size;
    const check = (reads: number[], what: string) => {
      assert.ok(reads.length >= 3, `${what}: told ${reads.length} times`);
      for (let i = 1; i < reads.length; i++) assert.ok(reads[i]! >= reads[i - 1]!, `${what}: never backwards (${reads.join(', ')})`);
      assert.ok(reads[0]! > 0 && reads.at(-1)! <= size, `${what}: within the log (${reads.join(', ')} of ${size})`);
    };
    const here: number[] = [];
    await new MetricsFollower(new LocalHost(), log).poll({ onRead: (read, of) => (assert.equal(of, size), here.push(read)) });
    check(here, 'read here');
    const worker: number[] = [];
    const f = new MetricsFollower(
      new LocalHost(),
      log,
      undefined,
      new MetricsCache(join(root, 'cache-progress'), { filler: new CacheFillWorkers(1) }),
    );
    await f.poll({ maxBytes: 4 << 20 });
    await f.poll({ maxBytes: 32 << 20, onRead: (read, of) => (assert.equal(of, size), worker.push(read)) });
    check(worker, 'read on a worker');
    assert.equal(f.series.length, 17_000);
  });

  it("gives the same series when the worker's blocks outgrow its 16 MB and go to its spill file", async () => {
    // 40k steps × 64 metrics: 320 blocks of 64 KB against a worker's 256 resident, so the cache file is written partly
    // from blocks read back from the spill file.
    const big = join(root, 'big.log');
    await writeDenseVerlSteps(big, 40_000, { step: 39_999, value: 77 });
    const here = await firstRead(big);
    const problems: string[] = [];
    const cache = new MetricsCache(join(root, 'cache-big'), { filler: new CacheFillWorkers(1), onProblem: (m) => problems.push(m) });
    const { f } = await firstRead(big, cache);
    assert.deepEqual(problems, []);
    assertSameSeries(f.series, here.f.series);
    assert.equal(f.series.existingColumn('critic/score/mean')!.get(f.series.length - 2), 77);
    rmSync(big);
  });
});
