import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { CountingHost } from '../../fixtures/counting-host';
import { metricsAtSteps } from '../../../src/core/metrics/metrics-at-steps';
import { RunMetrics } from '../../../src/core/metrics/run-metrics';
import { metricsAtStep } from '../../../src/core/metrics/headline';
import { denseStepLine, seeded, verlStepLine, writeDenseVerlSteps, writeVerlLog } from './verl-log-generator';

let root = '';
before(() => {
  root = mkdtempSync(join(tmpdir(), 'medrl-at-steps-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

function runDir(name: string, file: string, text: string | Buffer): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, file), text);
  return dir;
}

/**
 * What metricsAtSteps finds at each step is what the Checkpoints view showed before it searched: the record a parse of
 * the whole log gives at that step (or the last logged before it). Returns the bytes the search read.
 */
async function assertSameAsWholeParse(dir: string, steps: number[]): Promise<number> {
  const run = { host: 'local', dir, framework: 'verl' as const };
  const whole = new RunMetrics(new LocalHost(), run);
  await whole.poll();
  const host = new CountingHost();
  const found = await metricsAtSteps(host, run, steps);
  for (const step of steps) {
    const want = metricsAtStep(whole.series, step);
    assert.deepEqual(found.get(step)?.step, want?.step, `step ${step}: the step whose metrics are shown`);
    assert.deepEqual(found.get(step)?.metrics, want?.metrics, `metrics at step ${step}`);
  }
  return host.bytesRead;
}

describe("metricsAtSteps: a checkpoint's metrics without parsing the whole log", () => {
  it('finds steps of a 21 MB dense verl console log from under 2 MB of reads', async () => {
    const dir = join(root, 'dense');
    mkdirSync(dir);
    await writeDenseVerlSteps(join(dir, 'output.log'), 10_000, { step: 4321, value: 50 });
    const size = statSync(join(dir, 'output.log')).size;
    assert.ok(size > 20e6, `the log is ${size} bytes`);
    // Before the first step, the first and last, a middle one (the spike), past the end (the last step's), one per 1000.
    const read = await assertSameAsWholeParse(dir, [
      0,
      1,
      2,
      4321,
      9999,
      10_000,
      12_000,
      ...Array.from({ length: 9 }, (_, i) => (i + 1) * 1000),
    ]);
    assert.ok(read < 2e6, `read ${read} bytes of a ${size}-byte log for 16 steps`);
  });

  it('gives a step that was not logged the last logged before it, in a noisy log (one step line per 60 lines of Ray and vLLM)', async () => {
    const rng = seeded(3);
    const lines: string[] = [];
    // Steps every 10 from 10: a checkpoint at step 25 shows step 20's metrics.
    for (let step = 10; step <= 20_000; step += 10) {
      for (let i = 0; i < 60; i++)
        lines.push(`(WorkerDict pid=16211, ip=10.4.1.33) INFO 11-23 09:41:07 [executor_base.py:112] # cuda blocks: ${i}`);
      lines.push(verlStepLine(step, rng));
    }
    const dir = runDir('sparse', 'output.log', `${lines.join('\n')}\n`);
    assert.ok(statSync(join(dir, 'output.log')).size > 8 << 20);
    const read = await assertSameAsWholeParse(dir, [5, 10, 25, 3333, 19_990, 19_995, 20_000, 27_000]);
    assert.ok(read < 3e6, `read ${read} bytes`);
  });

  it("takes a resumed job's second attempt at the steps it logged twice (resumed from step 300, after a crash at 349)", async () => {
    const rng = seeded(5);
    const line = (step: number) => denseStepLine(step, rng);
    const steps = [...Array.from({ length: 349 }, (_, i) => i + 1), ...Array.from({ length: 4700 }, (_, i) => 301 + i)];
    const crash = '(TaskRunner pid=15930) torch.OutOfMemoryError: CUDA out of memory.\n';
    const text = steps.map((s, i) => `${i === 349 ? crash : ''}${line(s)}\n`).join('');
    const dir = runDir('resumed', 'output.log', text);
    assert.ok(statSync(join(dir, 'output.log')).size > 8 << 20);
    // Checkpoints every 100 steps: 300 (the one resumed from) and those the second attempt wrote.
    await assertSameAsWholeParse(dir, [100, 200, 300, 400, 500, 2500, 5000]);
  });

  it("finds steps in a big metrics.jsonl (verl's file logger)", async () => {
    const rows: string[] = [];
    for (let step = 1; step <= 40_000; step++)
      rows.push(
        JSON.stringify({
          step,
          data: { 'critic/score/mean': step / 40_000, 'actor/pg_loss': Math.sin(step), 'training/global_step': step, pad: 'x'.repeat(150) },
        }),
      );
    const dir = runDir('jsonl', 'metrics.jsonl', `${rows.join('\n')}\n`);
    const read = await assertSameAsWholeParse(dir, [1, 17, 20_000, 39_999, 40_000]);
    assert.ok(read < 1e6, `read ${read} bytes`);
  });

  it('parses a small log, or one with many checkpoints, whole (same answers)', async () => {
    const small = join(root, 'small');
    mkdirSync(small);
    await writeVerlLog(join(small, 'output.log'), 1 << 20);
    await assertSameAsWholeParse(small, [1, 3, 5]);
    const many = join(root, 'many');
    mkdirSync(many);
    await writeDenseVerlSteps(join(many, 'output.log'), 5000);
    const steps = Array.from({ length: 50 }, (_, i) => (i + 1) * 100);
    const read = await assertSameAsWholeParse(many, steps);
    assert.ok(read >= statSync(join(many, 'output.log')).size, 'fifty checkpoints: one pass over the log');
  });
});
