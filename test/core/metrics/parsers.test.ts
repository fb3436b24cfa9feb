import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { RunMetrics, openMetricsSource } from '../../../src/core/metrics/run-metrics';
import { headline, lastStep, metricsAtStep } from '../../../src/core/metrics/headline';
import { parseVerlConsoleLine } from '../../../src/core/metrics/verl-console';
import { parseTrlDict } from '../../../src/core/metrics/trl-log';
import { MetricLogParser } from '../../../src/core/metrics/metric-log-parser';
import { seededRandom } from '../../../src/core/random/seeded-random';

const FIX = join(__dirname, '../../fixtures/metrics');
const host = new LocalHost();

async function load(file: string) {
  const f = new MetricsFollower(host, join(FIX, file));
  await f.poll({ final: true });
  return { f, s: f.series, problems: await f.problems() };
}

function value(s: import('../../../src/core/metrics/metric-series').MetricSeries, step: number, key: string): number | undefined {
  return metricsAtStep(s, step)?.step === step ? metricsAtStep(s, step)!.metrics[key] : undefined;
}

describe('verl console lines', () => {
  it('reads Ray-prefixed, ANSI-coloured lines with NumPy 2 values and a validation-only step 0', async () => {
    const { s, f } = await load('verl-console-ray.log');
    assert.equal(f.framework, 'verl');
    assert.deepEqual(s.steps, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(value(s, 0, 'val-core/pubmedqa/acc/mean@1'), 0.412);
    assert.equal(value(s, 0, 'val-aux/num_turns/min'), 2);
    assert.equal(value(s, 0, 'critic/score/mean'), undefined);
    assert.equal(value(s, 2, 'perf/throughput'), 1387.2, 'np.float64(1387.2)');
    assert.equal(value(s, 3, 'critic/score/mean'), 0.75);
    assert.equal(value(s, 1, 'actor/lr'), 1e-6);
  });

  it('keeps what it can of corrupt lines, torn lines (stderr written into a step line) and a truncated last line, and says where', async () => {
    const { s, problems } = await load('verl-console-ray.log');
    // Step 4 was torn after actor/pg_loss by a warning: the values on the next line still belong to step 4.
    assert.equal(value(s, 4, 'actor/pg_loss'), undefined);
    assert.equal(value(s, 4, 'critic/score/mean'), 0.8);
    assert.equal(value(s, 4, 'perf/throughput'), 1387.2);
    // Step 5's entropy is "n/a": reported, the rest of its line kept.
    assert.equal(value(s, 5, 'actor/entropy'), undefined);
    assert.equal(value(s, 5, 'response_length/mean'), 333);
    // The killed job's last line (no newline) is read as far as it goes.
    assert.equal(value(s, 6, 'critic/score/mean'), 0.95);
    const text = problems.map((p) => `${p.line}: ${p.field ?? ''}: ${p.message}`);
    assert.ok(
      text.some((t) => t.startsWith('14: actor/pg_loss: step 4: unreadable metric')),
      text.join('\n'),
    );
    assert.ok(
      text.some((t) => t.startsWith('15: : step 4: the rest of a step line torn')),
      text.join('\n'),
    );
    assert.ok(
      text.some((t) => t.startsWith('16: actor/entropy: step 5')),
      text.join('\n'),
    );
    assert.ok(
      text.some((t) => t.startsWith('17: : a verl step line whose step is not a number ("step:x")')),
      text.join('\n'),
    );
    assert.ok(
      text.some((t) => t.startsWith('19: : the last line has no newline')),
      text.join('\n'),
    );
    assert.equal(problems.length, 5);
    assert.ok(problems.every((p) => p.file?.endsWith('verl-console-ray.log') && p.host === 'local'));
  });

  it('reads old verl key names (timing/step, actor/entropy_loss, val/test_score/...) and picks them as headlines', async () => {
    const { s } = await load('verl-console-old.log');
    assert.deepEqual(s.steps, [0, 1, 2, 3]);
    const h = headline(s, 'verl');
    assert.equal(h.metrics.validation?.key, 'val/test_score/openai/gsm8k');
    assert.equal(h.metrics.validation?.value, 0.45);
    assert.equal(h.metrics.entropy?.key, 'actor/entropy_loss');
    assert.equal(h.metrics.step_time?.key, 'timing/step');
    // Wall time from the cumulative step timings.
    assert.deepEqual(s.elapsedSeconds(), [NaN, 31, 63, 96]);
  });

  it('a resumed run that repeats steps: the later value wins', async () => {
    const { s } = await load('verl-resumed.log');
    assert.deepEqual(s.steps, [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(value(s, 3, 'critic/score/mean'), 0.30000000000000004);
    assert.equal(value(s, 4, 'critic/score/mean'), 0.54);
    assert.equal(value(s, 5, 'critic/score/mean'), 0.55);
  });

  it('keys that change from one line to the next (a byte apart anywhere, longer, shorter, spaced, with a colon) are read as written', () => {
    // The scanner matches each key against the previous line's key at its position: a differential check against a
    // fresh scanner per line, over keys mutated at random.
    const rng = seededRandom(11);
    const base = ['actor/pg_loss', 'critic/score/mean', 'timing_s/gen', 'perf/throughput', 'response_length/clip_ratio', 'a', 'kl'];
    const mutate = (k: string): string => {
      const r = rng();
      const at = Math.floor(rng() * k.length);
      if (r < 0.5) return k;
      if (r < 0.7) return `${k.slice(0, at)}${String.fromCharCode(97 + Math.floor(rng() * 26))}${k.slice(at + 1)}`;
      if (r < 0.8) return `${k}x`;
      if (r < 0.85) return k.slice(0, -1) || 'z';
      if (r < 0.9) return ` ${k}`;
      if (r < 0.95) return `${k.slice(0, at)}:${k.slice(at)}`;
      return `${k.slice(0, at)} ${k.slice(at)}`;
    };
    const parser = new MetricLogParser();
    const want = new Map<number, Record<string, number>>();
    for (let step = 1; step <= 400; step++) {
      const keys = base.map(mutate);
      const line = `step:${step} - ${keys.map((k, i) => `${k}:${(step * 7 + i) / 8}`).join(' - ')}`;
      const bytes = Buffer.from(`${line}\n`);
      parser.feedBytes({ buf: bytes, from: 0, to: bytes.length - 1, start: 0 });
      want.set(step, parseVerlConsoleLine(line)!.metrics);
    }
    for (let i = 0; i < parser.series.length; i++) {
      const rec = parser.series.row(i);
      assert.deepEqual(rec.metrics, want.get(rec.step), `step ${rec.step}`);
    }
    assert.equal(parser.series.length, 400);
  });

  it('ignores lines that only mention step: and parses a bare step line', () => {
    assert.equal(parseVerlConsoleLine('INFO global step: 5 - loss: 3'), undefined);
    assert.equal(parseVerlConsoleLine('Training Progress: timing_s/step:3'), undefined);
    assert.deepEqual(parseVerlConsoleLine('step:7 - a:inf - b:nan - c:-1e-06 - k:with:colon:2'), {
      step: 7,
      metrics: { a: Infinity, b: NaN, c: -1e-6, 'k:with:colon': 2 },
      bad: [],
    });
  });

  it('reads every value of the first line with more metrics than any before (real verl lines have 80 and more)', () => {
    // The scanner's arrays grow at 64, 128, ... values: the value that made them grow was written into the old array,
    // and read as 0 (a validation score of 0.3056 shown as 0, on the first such line only).
    const parser = new MetricLogParser();
    for (const n of [10, 65, 200]) {
      const parts = Array.from({ length: n }, (_, i) => `m${i}:${i + 0.25}`);
      parser.feed({ text: `(TaskRunner pid=1) step:${n} - ${parts.join(' - ')}`, start: 0 });
    }
    for (const n of [10, 65, 200]) {
      const row = parser.series.indexOf(n);
      for (let i = 0; i < n; i++) assert.equal(parser.series.existingColumn(`m${i}`)!.get(row), i + 0.25, `step ${n}, m${i}`);
    }
  });
});

describe('verl file logger JSONL', () => {
  it('reads records (bare NaN included), reports a corrupt record and a truncated last line', async () => {
    const { s, problems } = await load('verl-metrics.jsonl');
    assert.deepEqual(s.steps, [0, 1, 2, 3, 4]);
    assert.equal(value(s, 2, 'critic/score/mean'), 0.4);
    // Step 2's record has a bare NaN (json.dumps writes it; JSON.parse refuses it): the record is still read, and the NaN
    // is a logged NaN (a diverging gradient must be seen), not a missing value.
    assert.equal(value(s, 2, 'actor/kl_loss'), 0.002);
    assert.equal(value(s, 2, 'actor/grad_norm'), NaN);
    assert.equal(value(s, 1, 'actor/grad_norm'), undefined);
    assert.equal(value(s, 0, 'val-core/pubmedqa/acc/mean@1'), 0.5);
    assert.ok(problems.some((p) => p.line === 3 && /not valid JSON/.test(p.message)));
    assert.ok(problems.some((p) => p.line === 7 && /no newline/.test(p.message)));
  });
});

describe('TRL logs', () => {
  it('transformers 4: dicts among tqdm carriage returns and warnings, steps from the training bar, eval_ at the step it follows', async () => {
    const { s, f, problems } = await load('trl-grpo-transformers4.log');
    assert.equal(f.framework, 'trl');
    assert.deepEqual(s.steps, [5, 10, 15, 20]);
    assert.equal(value(s, 10, 'reward'), 0.5);
    assert.equal(value(s, 10, 'eval_reward'), 0.47);
    assert.equal(value(s, 20, 'train_runtime'), 96.3);
    assert.equal(value(s, 15, 'rewards/accuracy_reward/mean'), 0.75);
    assert.deepEqual(problems, []);
    const h = headline(readFileSync(join(FIX, 'trl-grpo-transformers4.log'), 'utf8'));
    assert.equal(h.framework, 'trl');
    assert.equal(h.lastStep, 20);
    assert.equal(h.metrics.reward?.value, 1);
    assert.equal(h.metrics.kl?.key, 'kl');
  });

  it('transformers 5: values as strings; without a progress bar, steps are logging events; a cut dict is reported', async () => {
    const { s, problems } = await load('trl-grpo-transformers5.log');
    assert.deepEqual(s.steps, [1, 2, 3]);
    assert.equal(value(s, 2, 'reward'), 0.2);
    assert.equal(value(s, 3, 'completions/mean_length'), 203);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.line, 5);
    assert.match(problems[0]!.message, /missing closing \}/);
  });

  it('PPO keys: objective/scores is the reward; PPO logs before its bar moves, so each dict is one step past the bar', async () => {
    const { s } = await load('trl-ppo.log');
    assert.deepEqual(s.steps, [1, 2, 3]);
    const h = headline(s, 'trl');
    assert.equal(h.metrics.reward?.key, 'objective/scores');
    assert.equal(h.metrics.kl?.key, 'objective/kl');
    assert.equal(h.metrics.entropy?.key, 'objective/entropy');
  });

  it('a Python dict: quotes, None, nested values, scientific notation', () => {
    assert.deepEqual(parseTrlDict(`{'loss': 1e-06, 'name': 'x', 'grad_norm': None, 'hist': [1, 2], "it's": 2, 'epoch': '0.5'}`).metrics, {
      loss: 1e-6,
      "it's": 2,
      epoch: 0.5,
    });
    assert.throws(() => parseTrlDict(`{'loss' 0.1}`), /expected ':'/);
  });
});

describe('run folders', () => {
  it('TRL without output.log: the newest checkpoint trainer_state.json (from run.json framework)', async () => {
    const run = new RunMetrics(host, { host: 'local', dir: join(FIX, 'trl-run') });
    await run.poll();
    assert.equal(run.framework, 'trl');
    assert.ok(run.source?.endsWith('checkpoint-20/trainer_state.json'));
    assert.deepEqual(run.series.steps, [5, 10, 15, 20]);
    assert.equal(metricsAtStep(run.series, 10)?.metrics.eval_reward, 0.47);
    // A checkpoint between logging steps gets the last logged step before it.
    assert.equal(metricsAtStep(run.series, 12)?.step, 10);
    assert.equal(metricsAtStep(run.series, 3), undefined);
  });

  it('verl: metrics.jsonl preferred over output.log once it exists; followed from the last offset; truncation restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-run-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ framework: 'verl' }));
    copyFileSync(join(FIX, 'verl-resumed.log'), join(dir, 'output.log'));
    const src = await openMetricsSource(host, dir);
    assert.equal((await src.poll()).steps, 9, 'nine step lines: the resume logged two steps again');
    assert.ok(src.source?.endsWith('output.log'));
    assert.equal(src.series.length, 7);
    writeFileSync(
      join(dir, 'metrics.jsonl'),
      '{"step": 8, "data": {"critic/score/mean": 0.6}}\n{"step": 9, "data": {"critic/score/mean": 0.6',
    );
    assert.equal((await src.poll({ live: true })).steps, 1, 'only the new complete line is read; the partial one waits');
    assert.ok(src.source?.endsWith('metrics.jsonl'));
    assert.equal(lastStep(src.series), 8);
    appendFileSync(join(dir, 'metrics.jsonl'), '1}}\n');
    assert.equal((await src.poll({ live: true })).steps, 1);
    const nine = src.series.row(src.series.indexOf(9));
    assert.deepEqual(nine.metrics, { 'critic/score/mean': 0.61 });
    assert.ok(nine.observedAt! > 0, 'a live poll stamps when the step was seen');
    // A resumed verl run truncates metrics.jsonl: read again from the start, earlier points kept, later values win.
    writeFileSync(join(dir, 'metrics.jsonl'), '{"step": 9, "data": {"critic/score/mean": 0.7}}\n');
    const r = await src.poll();
    assert.equal(r.restarted, true);
    assert.equal(src.series.length, 9);
    assert.equal(metricsAtStep(src.series, 9)?.metrics['critic/score/mean'], 0.7);
    assert.equal(lastStep(src.series), 9);
  });

  it('headline() of a log tail that starts mid-line', () => {
    const tail = 'ore/mean:0.1 - x:1\nstep:41 - critic/score/mean:0.5 - actor/kl_loss:0.01\nstep:42 - critic/score/mean:0.6\n';
    const h = headline(tail);
    assert.equal(h.lastStep, 42);
    assert.equal(h.metrics.reward?.value, 0.6);
    assert.deepEqual(h.metrics.kl, { key: 'actor/kl_loss', value: 0.01, step: 41 });
  });
});
