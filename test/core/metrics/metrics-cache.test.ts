import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { CountingHost } from '../../fixtures/counting-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricsCache } from '../../../src/core/metrics/metrics-cache';
import { BlockSpill } from '../../../src/core/metrics/block-spill';
import { denseStepLine, seeded, writeDenseVerlSteps } from './verl-log-generator';
import { assertSameSeries } from './same-series';

async function parsed(host: LocalHost, file: string, cache?: MetricsCache): Promise<MetricsFollower> {
  const f = new MetricsFollower(host, file, undefined, cache);
  while ((await f.poll({ maxBytes: 4 << 20 })).more);
  return f;
}

describe('the metrics cache: a big log read before is read again only from where the last read stopped', () => {
  let root: string;
  let log: string;
  const STEPS = 9000; // past a column block (8192 rows): a restored column spans two blocks
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'medrl-metrics-cache-'));
    log = join(root, 'output.log');
    await writeDenseVerlSteps(log, STEPS, { step: 4321, value: 50 });
    // A diverging loss and a None: both must come back as they were (a logged NaN, a note).
    appendFileSync(log, '(TaskRunner pid=1) step:9001 - actor/pg_loss:nan - critic/score/mean:0.5 - actor/grad_norm:None\n');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('gives the same series, notes and framework as a parse, and reads only what the log gained since', async () => {
    const dir = join(root, 'cache-a');
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20, onProblem: (m) => problems.push(m) });
    const first = await parsed(new LocalHost(), log, cache);
    const file = readdirSync(dir)[0]!;
    assert.ok(file.endsWith('.bin'), 'the first read of a big log writes its cache file');
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600);

    const host = new CountingHost();
    const again = await parsed(host, log, cache);
    assertSameSeries(again.series, first.series);
    assert.deepEqual(again.notes(), first.notes());
    assert.equal(again.framework, 'verl');
    assert.ok(Number.isNaN(again.series.row(STEPS).metrics['actor/pg_loss']!), 'a logged NaN stays a NaN');
    assert.ok(host.bytesRead < 128 << 10, `opening again read ${host.bytesRead} bytes of a ${statSync(log).size}-byte log`);

    // The run went on: the next open reads the new steps alone, and has them.
    const rng = seeded(3);
    appendFileSync(log, `${denseStepLine(9002, rng)}\n${denseStepLine(9003, rng)}\n`);
    const grown = new CountingHost();
    const third = await parsed(grown, log, cache);
    assert.equal(third.series.length, STEPS + 3);
    assert.equal(third.series.steps.at(-1), 9003);
    assertSameSeries(third.series, (await parsed(new LocalHost(), log)).series);
    assert.ok(grown.bytesRead < 128 << 10, `read ${grown.bytesRead} bytes for two new lines`);
    assert.deepEqual(problems, []);
  });

  it('reads a log rewritten since (a resumed run that truncated it) from the start', async () => {
    const dir = join(root, 'cache-b');
    const copy = join(root, 'rewritten.log');
    const original = readFileSync(log);
    writeFileSync(copy, original);
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20 });
    await parsed(new LocalHost(), copy, cache);
    // verl resumed from a checkpoint at step 5000 rewrote the log from there: it starts the same and is as long.
    const resumeAt = original.indexOf('step:5000 ');
    const rng = seeded(5);
    let rewritten = original.subarray(0, original.lastIndexOf('\n', resumeAt) + 1).toString();
    for (let step = 5000; rewritten.length < original.length; step++) rewritten += `${denseStepLine(step, rng)}\n`;
    writeFileSync(copy, rewritten);
    const again = await parsed(new LocalHost(), copy, cache);
    assertSameSeries(again.series, (await parsed(new LocalHost(), copy)).series);
    // Shorter than the cached offset: read from the start too.
    truncateSync(copy, 1 << 20);
    const shorter = await parsed(new LocalHost(), copy, cache);
    assertSameSeries(shorter.series, (await parsed(new LocalHost(), copy)).series);
    assert.ok(shorter.series.length < 1000);
  });

  it('says a damaged cache file is damaged, removes it and reads the log whole', async () => {
    const dir = join(root, 'cache-c');
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20, onProblem: (m) => problems.push(m) });
    const first = await parsed(new LocalHost(), log, cache);
    const file = join(dir, readdirSync(dir)[0]!);
    truncateSync(file, 100);
    const again = await parsed(new LocalHost(), log, cache);
    assertSameSeries(again.series, first.series);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, new RegExp(`metrics cache file ${file} is damaged and was removed; the log is read whole`));
    // The parse was kept again, whole.
    assert.ok(statSync(file).size > 1 << 20);
  });

  it('replaces a file of an older version without a word (version 1 could hold a value lost by the verl line scanner)', async () => {
    const dir = join(root, 'cache-v');
    const problems: string[] = [];
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20, onProblem: (m) => problems.push(m) });
    const first = await parsed(new LocalHost(), log, cache);
    const file = join(dir, readdirSync(dir)[0]!);
    const bytes = readFileSync(file);
    assert.equal(bytes.subarray(0, 8).toString('latin1'), 'MEDRLMC2');
    bytes.write('MEDRLMC1', 0, 'latin1');
    writeFileSync(file, bytes);
    const host = new CountingHost();
    const again = await parsed(host, log, cache);
    assertSameSeries(again.series, first.series);
    assert.ok(host.bytesRead >= statSync(log).size, 'the log was read whole');
    assert.deepEqual(problems, []);
    assert.equal(readFileSync(file).subarray(0, 8).toString('latin1'), 'MEDRLMC2', 'and kept again in this version');
  });

  it('keeps no file for a small log, or for one with problems (their messages quote the log)', async () => {
    const dir = join(root, 'cache-d');
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20 });
    const small = join(root, 'small.log');
    writeFileSync(small, `${denseStepLine(1, seeded(1))}\n`);
    await parsed(new LocalHost(), small, cache);
    const bad = join(root, 'bad.log');
    writeFileSync(bad, readFileSync(log));
    appendFileSync(bad, '(TaskRunner pid=1) step:9100 - actor/pg_loss:0.1 - critic/score/mean:oops\n');
    const f = await parsed(new LocalHost(), bad, cache);
    assert.equal(f.parser.problems.length, 1);
    assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);
  });

  it('keeps the folder within its size, dropping the least recently used file', async () => {
    const dir = join(root, 'cache-e');
    const one = statSync(log).size;
    const logs = ['x.log', 'y.log', 'z.log'].map((n) => join(root, n));
    for (const l of logs) writeFileSync(l, readFileSync(log));
    const probe = join(root, 'cache-probe');
    await parsed(new LocalHost(), log, new MetricsCache(probe, { minLogBytes: 1 << 20 }));
    const fileBytes = statSync(join(probe, readdirSync(probe)[0]!)).size;
    // Room for two files of this log's parse, not three.
    const cache = new MetricsCache(dir, { minLogBytes: 1 << 20, maxBytes: Math.floor(fileBytes * 2.5) });
    await parsed(new LocalHost(), logs[0]!, cache);
    await parsed(new LocalHost(), logs[1]!, cache);
    await new Promise((r) => setTimeout(r, 20));
    // x is opened again (used), so y is the oldest when z comes.
    const host = new CountingHost();
    await parsed(host, logs[0]!, cache);
    assert.ok(host.bytesRead < 128 << 10);
    await new Promise((r) => setTimeout(r, 20));
    await parsed(new LocalHost(), logs[2]!, cache);
    assert.equal(readdirSync(dir).length, 2);
    const y = new CountingHost();
    await parsed(y, logs[1]!, cache);
    assert.ok(y.bytesRead >= one, 'the dropped file is read whole again');
  });

  it('keeps nothing at a size of 0 MB (medrl.metrics.cacheSizeMB) and removes what it kept before', async () => {
    const dir = join(root, 'cache-sized');
    const problems: string[] = [];
    const kept = MetricsCache.sized(dir, 1024, (m) => problems.push(m))!;
    await parsed(new LocalHost(), log, kept);
    assert.equal(readdirSync(dir).length, 1, 'a 1024 MB cache kept the parse of the 19 MB log');
    assert.equal(
      MetricsCache.sized(dir, 0, (m) => problems.push(m)),
      undefined,
    );
    for (let i = 0; existsSync(dir) && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(existsSync(dir), false, 'the folder is removed');
    // Opened again with no cache: read whole.
    const host = new CountingHost();
    await parsed(host, log, undefined);
    assert.ok(host.bytesRead >= statSync(log).size);
    assert.deepEqual(problems, []);
  });

  it('reads restored columns back from the file after their blocks left memory', async () => {
    const dir = join(root, 'cache-f');
    const spill = new BlockSpill({ budgetBytes: 4 * 64 * 1024, dir: root });
    try {
      const cache = new MetricsCache(dir, { minLogBytes: 1 << 20, spill });
      const first = await parsed(new LocalHost(), log, cache);
      const again = await parsed(new LocalHost(), log, cache);
      // Comparing reads every block of both, far past four blocks: restored ones go and come back from the file.
      assertSameSeries(again.series, first.series);
      // Within the budget, but for each column's last block (the one rows are added to, which stays).
      const columns = again.series.metricNames().length;
      assert.ok(spill.residentBlocks <= 4 + columns, `${spill.residentBlocks} blocks resident, ${columns} columns`);
      assert.equal(Math.max(...again.series.column('critic/score/mean').map((v) => v ?? -Infinity)), 50);
    } finally {
      spill.close();
    }
  });
});
