import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openMetricsSource, type MetricsSource } from '../../../src/core/metrics/run-metrics';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { denseStepLine, DENSE_KEYS, seeded, writeDenseVerlLog, writeVerlLog } from './verl-log-generator';
import { bytesOf as sum, denseSteps, ReadLog, StepsAdded, stepRange as range } from './live-tail-fixture';

/** Steps of the dense log (about 2.1 KB each); MEDRL_LIVE_TAIL_STEPS=1000000 measures issue 19's largest size (2.1 GB). */
const STEPS = Number(process.env.MEDRL_LIVE_TAIL_STEPS ?? 100_000);

describe(`following a growing dense verl log of ${STEPS} steps × 64 metrics`, () => {
  let dir: string;
  let file: string;
  let steps: number;
  const host = new LocalHost();
  const log = new ReadLog(host);
  let src: MetricsSource;
  const added = new StepsAdded(() => src.series);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'medrl-tail-'));
    file = join(dir, 'output.log');
    steps = await writeDenseVerlLog(file, STEPS * 2110);
    src = await openMetricsSource(host, file);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the first poll reads the whole log once (and its first 4 MB range twice)', async () => {
    const t = performance.now();
    await src.poll();
    const reads = log.take();
    console.log(`[live tail] first poll: ${statSync(file).size} bytes, ${steps} steps in ${(performance.now() - t).toFixed(0)} ms`);
    assert.ok(steps >= STEPS * 0.99, `${steps} steps`);
    // Once: the first range again, scanned for the format's marker alone once the first step line shows the format.
    const extra = sum(reads) - statSync(file).size;
    assert.ok(extra >= 0 && extra <= 4 << 20, `${extra} bytes read twice`);
    assert.equal(src.series.length, steps);
    assert.equal(src.series.metricNames().length, DENSE_KEYS.length);
    assert.deepEqual(added.take(), range(1, steps));
  });

  it('each poll after an append reads only the appended bytes and adds exactly the new steps', async () => {
    // One step, a minute's worth, and a burst larger than a read chunk (4 MB): the cost follows the append, not the file.
    for (const n of [1, 40, 2500]) {
      const before = statSync(file).size;
      appendFileSync(file, denseSteps(steps + 1, steps + n));
      const appended = statSync(file).size - before;
      const t = performance.now();
      const r = await src.poll({ live: true });
      const ms = performance.now() - t;
      const reads = log.take();
      console.log(`[live tail] +${n} step(s): read ${sum(reads)} bytes in ${reads.length} range(s), ${ms.toFixed(1)} ms`);
      assert.equal(reads[0]!.start, before, 'reading starts where the last poll ended');
      assert.equal(sum(reads), appended, `+${n} steps: the poll read only the ${appended} new bytes`);
      if (appended < 4 << 20) assert.equal(reads.length, 1, 'a small append is one range read (one round trip over SSH)');
      assert.equal(r.steps, n);
      assert.deepEqual(added.take(), range(steps + 1, steps + n), 'exactly the new steps, none again');
      steps += n;
      assert.equal(src.series.length, steps);
    }
  });

  it('a poll with nothing new reads nothing; a line being written is read again only from its start', async () => {
    await src.poll({ live: true });
    assert.deepEqual(log.take(), [], 'the file did not grow: no read');
    assert.deepEqual(added.take(), []);

    const line = denseSteps(steps + 1, steps + 1);
    const half = Math.floor(line.length / 2);
    const lineStart = statSync(file).size;
    appendFileSync(file, line.slice(0, half));
    await src.poll({ live: true });
    assert.deepEqual(
      log.take().map((r) => [r.start, r.bytes]),
      [[lineStart, half]],
    );
    assert.deepEqual(added.take(), [], 'a step line without its newline waits');

    appendFileSync(file, line.slice(half) + denseSteps(steps + 2, steps + 2));
    await src.poll({ live: true });
    const reads = log.take();
    assert.equal(reads[0]!.start, lineStart, 'from the start of the unfinished line');
    assert.equal(sum(reads), statSync(file).size - lineStart);
    assert.deepEqual(added.take(), [steps + 1, steps + 2]);
    steps += 2;
  });

  it('a poll that fails mid-read keeps what it parsed: the next one reads on from there, no step lost or twice', async () => {
    const n = 6000; // about 12 MB: three 4 MB ranges
    const before = statSync(file).size;
    appendFileSync(file, denseSteps(steps + 1, steps + n));
    const appended = statSync(file).size - before;
    log.failAfter = 1;
    await assert.rejects(src.poll({ live: true }), /connection lost/);
    const failed = log.take();
    assert.ok(failed.length >= 1);
    const parsedBefore = src.series.length - steps;
    assert.ok(parsedBefore > 0 && parsedBefore < n, `the failed poll parsed ${parsedBefore} of ${n} steps before the read failed`);
    await src.poll({ live: true });
    const next = log.take();
    assert.ok(next[0]!.start > before, `the next poll starts at ${next[0]!.start}, past where the append began (${before})`);
    // Bytes read again: only those of the range that failed and the ones read ahead but not parsed, under three ranges.
    const reread = sum(failed) + sum(next) - appended;
    console.log(`[live tail] a read failed mid-poll: ${sum(failed)} + ${sum(next)} bytes read for ${appended} appended`);
    assert.ok(reread >= 0 && reread < 3 * (4 << 20), `${reread} bytes read twice`);
    assert.deepEqual(added.take(), range(steps + 1, steps + n), 'every new step once');
    steps += n;
    assert.equal(src.series.length, steps);
    assert.equal(src.series.row(steps - 1).metrics['training/global_step'], steps);
  });
});

describe("a verl console log's output after its last step line", () => {
  it('is read once, not again on every poll (a long validation or vLLM start can print megabytes between steps)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-tail-'));
    try {
      const file = join(dir, 'output.log');
      const steps = await writeVerlLog(file, 1 << 20);
      const host = new LocalHost();
      const log = new ReadLog(host);
      const src = await openMetricsSource(host, file);
      const added = new StepsAdded(() => src.series);
      await src.poll();
      log.take();
      added.take();
      const noise = '(WorkerDict pid=16211, ip=10.4.1.33) INFO 11-23 09:41:07 [executor_base.py:112] # cuda blocks: 30542\n';
      for (let round = 0; round < 3; round++) {
        const before = statSync(file).size;
        appendFileSync(file, noise.repeat(2000));
        await src.poll({ live: true });
        const reads = log.take();
        assert.equal(reads[0]!.start, before, `round ${round}: reading starts after the output already read`);
        assert.equal(sum(reads), statSync(file).size - before, `round ${round}: only the new output is read`);
      }
      assert.deepEqual(added.take(), []);
      const before = statSync(file).size;
      appendFileSync(file, `${denseStepLine(steps + 1, seeded(1))}\n`);
      await src.poll({ live: true });
      assert.equal(sum(log.take()), statSync(file).size - before);
      assert.deepEqual(added.take(), [steps + 1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a log followed while it is written, a piece at a time', () => {
  const FIX = join(__dirname, '../../fixtures');
  const logs = [
    'metrics/verl-console-ray.log',
    'metrics/verl-console-old.log',
    'metrics/verl-resumed.log',
    'metrics/verl-metrics.jsonl',
    'metrics/trl-grpo-transformers4.log',
    'metrics/trl-grpo-transformers5.log',
    'metrics/trl-dpo-transformers5.log',
    'metrics/trl-ppo.log',
    'metrics/transformers5-trainer/logging-steps-2/output.log',
    'trl-real/grpo-fn/output.log',
    'trl-real/dpo/output.log',
    'trl-real/sft-resume/output.log',
  ];
  for (const name of logs)
    it(`${name}: the same steps, values and problems as one read of the whole file`, async () => {
      const bytes = readFileSync(join(FIX, name));
      const dir = mkdtempSync(join(tmpdir(), 'medrl-tail-'));
      try {
        const whole = join(dir, 'whole.log');
        writeFileSync(whole, bytes);
        const once = new MetricsFollower(new LocalHost(), whole);
        await once.poll({ final: true });
        // Pieces of a prime size, so they end anywhere: inside a value, a tqdm redraw, a line's \r or its newline.
        const growing = join(dir, 'growing.log');
        writeFileSync(growing, '');
        const f = new MetricsFollower(new LocalHost(), growing);
        for (let at = 0; at < bytes.length; at += 97) {
          appendFileSync(growing, bytes.subarray(at, at + 97));
          await f.poll();
        }
        await f.poll({ final: true });
        assert.ok(once.series.length > 0);
        assert.deepEqual(f.series.steps, once.series.steps);
        for (let i = 0; i < once.series.length; i++) assert.deepEqual(f.series.row(i), once.series.row(i));
        assert.deepEqual(
          await f.problems(),
          (await once.problems()).map((p) => ({ ...p, file: growing })),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

describe('a big log read in slices (the dashboard draws each slice as it comes)', () => {
  it('stops each poll at a line end past maxBytes, says there is more, and ends with the series one read gives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-tail-'));
    try {
      const file = join(dir, 'output.log');
      const steps = await writeDenseVerlLog(file, 5 << 20);
      const whole = await openMetricsSource(new LocalHost(), file);
      await whole.poll({ final: true });
      const sliced = await openMetricsSource(new LocalHost(), file);
      const slices: number[] = [];
      for (;;) {
        const r = await sliced.poll({ final: true, maxBytes: 1 << 20 });
        slices.push(sliced.series.length);
        if (!r.more) break;
      }
      assert.ok(slices.length >= 5, `${slices.length} slices of a 5 MB log`);
      assert.ok(
        slices.every((n, i) => i === 0 || n > slices[i - 1]!),
        `each slice adds steps: ${slices.join(', ')}`,
      );
      assert.equal(sliced.series.length, steps);
      assert.deepEqual(sliced.series.steps, whole.series.steps);
      for (const k of whole.series.metricNames()) assert.deepEqual(sliced.series.column(k), whole.series.column(k), k);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
