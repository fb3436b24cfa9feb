import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricSeries } from '../../../src/core/metrics/metric-series';
import { Float64Column } from '../../../src/core/metrics/float64-column';
import { headline } from '../../../src/core/metrics/headline';
import { parseTrainerState } from '../../../src/core/metrics/trl-trainer-state';
import { parseBar } from '../../../src/core/metrics/trl-log';
import { progressFromLog } from '../../../src/core/runs/log-progress';
import { stepLabel } from '../../../src/core/runs/run-summary';
import type { RunInfo } from '../../../src/core/runs/list-runs';
import { headlineMetric } from '../../../src/core/checkpoints/headline-metrics';
import { metricsCsv } from '../../../src/core/metrics/metrics-csv';
import { SeriesCharts } from '../../../src/core/metrics/chart-view';
import { checkAgainstTrainerState } from './trainer-state-check';

const FIX = join(__dirname, '../../fixtures/metrics');
const host = new LocalHost();

/**
 * trl-dpo-transformers5.log is written the way transformers 5 and tqdm write a run's output: ProgressCallback.on_log
 * calls `training_bar.write(str(logs))`, which clears the bars, prints the dict and redraws the bars at their current
 * count; tqdm draws an update at most every 0.1 s, so step 2's dict sits on the line of step 1's bar, and only the
 * redraw after it shows 2. After training, save_pretrained draws "Writing model shards: 1/1".
 */
describe('TRL console output as transformers 5 and tqdm write it', () => {
  it("every logged step is kept: a dict beside the previous step's bar takes the step of the bar drawn after it", async () => {
    const f = new MetricsFollower(host, join(FIX, 'trl-dpo-transformers5.log'));
    await f.poll({ final: true });
    assert.deepEqual(f.series.steps, [1, 2, 3]);
    const rec = (step: number) => f.series.row(f.series.indexOf(step)).metrics;
    assert.equal(rec(1)['rewards/margins'], 0);
    assert.equal(rec(2)['rewards/margins'], 0.0163);
    assert.equal(rec(3)['rewards/accuracies'], 1);
    // The end-of-training summary belongs to the last step, not a fourth one.
    assert.equal(rec(3).train_runtime, 4.123);
    assert.deepEqual(await f.problems(), []);
  });

  it("a dict printed on a line of its own (no tqdm clear before it: PrinterCallback, a script's print) takes the bar before it", () => {
    const log =
      "\r 50%|█████     | 1/2 [00:01<00:01,  1.00it/s]\n{'loss': '0.6'}\n\r100%|██████████| 2/2 [00:02<00:00,  1.00it/s]\n{'loss': '0.5'}\n{'train_runtime': '2.0', 'train_loss': '0.55'}\n";
    const h = headline(log, 'trl');
    assert.equal(h.lastStep, 2);
    assert.equal(h.metrics.loss?.step, 2);
    assert.deepEqual(progressFromLog(log, 'trl', 'sft'), {
      step: 2,
      totalSteps: 2,
      metrics: [{ id: 'loss', title: 'Loss', key: 'loss', value: 0.5 }],
    });
  });

  it('NaN and infinities are logged values, with their sign, never dropped: series, headline, dashboard', async () => {
    const f = new MetricsFollower(host, join(FIX, 'trl-dpo-transformers5.log'));
    await f.poll({ final: true });
    const s = f.series;
    assert.deepEqual(
      s.points('loss').map((p) => p.value),
      [0.6931, NaN, 0.6812],
    );
    assert.deepEqual(
      s.points('grad_norm').map((p) => p.value),
      [1.052, Infinity, 0.9981],
    );
    assert.deepEqual(
      s.points('logps/chosen').map((p) => p.value),
      [-312.4, -Infinity],
    );
    // A step that did not log a key is not a NaN.
    assert.deepEqual(s.column('logps/rejected'), [-298.1, undefined, undefined]);
    assert.equal(headline(s, 'trl').metrics.loss?.value, 0.6812);
    assert.ok(Number.isNaN(s.row(s.indexOf(3)).metrics.train_loss!), 'a NaN train_loss in the summary is kept');
    // The dashboard names them with their steps and draws gaps there: a chart never plots a NaN as a value.
    const view = new SeriesCharts(s).line({ key: 'grad_norm', axis: 'step', range: null, width: 800, smoothing: 0 })!;
    assert.deepEqual(view.nonFinite, [{ step: 2, value: Infinity }]);
    assert.deepEqual(view.hi, [1.052, null, 0.9981]);
  });

  it('transformers 4 dicts: bare nan, -inf and np.float64(nan) are values too', () => {
    const h = headline("{'loss': nan, 'grad_norm': -inf, 'reward': np.float64(nan), 'epoch': 0.1}\n", 'trl');
    assert.ok(Number.isNaN(h.metrics.loss!.value) && Number.isNaN(h.metrics.reward!.value));
  });

  it('verl console lines: nan, -inf and np.float64(nan) are kept as values', () => {
    const h = headline(
      'step:1 - critic/score/mean:0.5 - actor/pg_loss:0.1\nstep:2 - critic/score/mean:np.float64(nan) - actor/pg_loss:nan - actor/grad_norm:-inf\n',
      'verl',
    );
    assert.equal(h.lastStep, 2);
    assert.ok(
      Number.isNaN(h.metrics.reward!.value) && h.metrics.reward!.step === 2,
      "the reward headline shows NaN at step 2, not step 1's 0.5",
    );
  });

  it('a NaN logged at a step inserted before others stays a NaN, and the rows not logged stay not logged', () => {
    const col = new Float64Column();
    col.set(0, 1);
    col.set(1, NaN);
    col.set(3, -Infinity);
    col.insertMissing(1);
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((i) => col.value(i)),
      [1, undefined, NaN, undefined, -Infinity],
    );
    assert.equal(col.length, 5);
  });

  it('CSV export writes NaN and infinities as such, never as blanks', () => {
    const series = new MetricSeries();
    series.add({ step: 1, metrics: { loss: NaN } });
    series.add({ step: 2, metrics: { loss: -Infinity, 'timing_s/step': 3 } });
    series.add({ step: 3, metrics: { loss: 0.5, 'timing_s/step': 2 } });
    const csv = metricsCsv([{ run: 'r,1', series, key: 'loss' }]);
    assert.equal(
      csv,
      'run,metric,step,elapsed_s,value,smoothed\r\n"r,1",loss,1,,NaN,NaN\r\n"r,1",loss,2,3,-Infinity,-Infinity\r\n"r,1",loss,3,5,0.5,0.5\r\n',
    );
  });

  it('trainer_state.json with a bare NaN/Infinity (json.dump writes them) is read, values kept', () => {
    const text =
      '{"global_step": 2, "log_history": [{"loss": 0.69, "step": 1}, {"loss": NaN, "grad_norm": Infinity, "rewards/margins": -Infinity, "step": 2}]}';
    const { records, problems } = parseTrainerState(text, 'trainer_state.json');
    assert.deepEqual(problems, []);
    assert.deepEqual(records[1], { step: 2, metrics: { loss: NaN, grad_norm: Infinity, 'rewards/margins': -Infinity } });
  });

  it('a live log: the last dict gets its step from the bar being drawn after it, without waiting for the next dict', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-trl-'));
    const file = join(dir, 'output.log');
    const lines = readFileSync(join(FIX, 'trl-dpo-transformers5.log'), 'utf8').split('\n');
    // Up to dict 2 and the redraw after it, which has no newline yet (the line of the next dict).
    writeFileSync(file, `${lines.slice(0, 4).join('\n')}\n${lines[4]!.split('\r').slice(0, 2).join('\r')}`);
    const f = new MetricsFollower(host, file);
    await f.poll();
    assert.deepEqual(f.series.steps, [1, 2]);
    appendFileSync(file, `\r${lines[4]!.split('\r').slice(2).join('\r')}\n${lines.slice(5).join('\n')}`);
    await f.poll({ final: true });
    assert.deepEqual(f.series.steps, [1, 2, 3]);
  });
});

describe('real transformers 5.17 output (H100 runs of test/fixtures/metrics/transformers5-trainer/tiny_trainer.py)', () => {
  const dir = join(FIX, 'transformers5-trainer');
  it("logging_steps 1: every step, at the step trainer_state.json has, though the bar before most dicts is the previous step's", async () => {
    const s = await checkAgainstTrainerState(join(dir, 'logging-steps-1/output.log'), join(dir, 'logging-steps-1/trainer_state.json'));
    assert.deepEqual(s.steps, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.equal(s.row(s.indexOf(12)).metrics.train_runtime, 1.087, 'the end-of-training summary is at the last step');
    const p = progressFromLog(readFileSync(join(dir, 'logging-steps-1/output.log'), 'utf8'), 'trl', 'sft');
    assert.deepEqual([p.step, p.totalSteps], [12, 12], 'not "Writing model shards 1/1", nor the evaluation bar 4/4');
  });

  it('logging_steps 2, with evaluation every 6 steps: eval_* at the step it follows, no step lost', async () => {
    const s = await checkAgainstTrainerState(join(dir, 'logging-steps-2/output.log'), join(dir, 'logging-steps-2/trainer_state.json'));
    assert.deepEqual(s.steps, [2, 4, 6, 8, 10, 12]);
    assert.deepEqual(
      s.points('eval_loss').map((x) => x.step),
      [6, 12],
    );
  });

  it('the progress of a live run, from a 4 KB tail at any point, is the training bar', () => {
    const log = readFileSync(join(dir, 'logging-steps-1/output.log'), 'utf8');
    for (let end = 600; end <= log.length; end += 97) {
      const p = progressFromLog(log.slice(Math.max(0, end - 4096), end), 'trl', 'sft');
      if (p.totalSteps !== undefined) assert.equal(p.totalSteps, 12, `tail ending at ${end}`);
      if (p.step !== undefined) assert.ok(p.step >= 1 && p.step <= 12, `tail ending at ${end}: step ${p.step}`);
    }
  });
});

describe('progress and headlines of real output', () => {
  it('progress is the training bar: not "Writing model shards 1/1" after training, nor a dataset or loading bar', () => {
    const log = readFileSync(join(FIX, 'trl-dpo-transformers5.log'), 'utf8');
    const p = progressFromLog(log, 'trl', 'dpo');
    assert.equal(p.step, 3);
    assert.equal(p.totalSteps, 3);
    // Before training: only loading and dataset bars, so no step.
    assert.deepEqual(
      progressFromLog(
        'Loading checkpoint shards: 100%|██████████| 2/2 [00:00<00:00, 41.2it/s]\nMap: 100%|██████████| 12/12 [00:00<00:00, 99 examples/s]\n',
        'trl',
        'sft',
      ),
      { metrics: [] },
    );
    // A tail that starts after the last dict: the training bar's last drawing, then the save bar.
    const tail =
      '\r 40%|████      | 4/10 [00:04<00:06,  1.0it/s]\r 50%|█████     | 5/10 [00:05<00:05,  1.0it/s]\nWriting model shards: 100%|██████████| 1/1 [00:00<00:00,  9.81it/s]\n';
    assert.deepEqual(progressFromLog(tail, 'trl'), { step: 5, totalSteps: 10, metrics: [] });
    assert.deepEqual(parseBar('Writing model shards: 100%|██████████| 1/1 [00:00<00:00,  9.81it/s]'), {
      n: 1,
      total: 1,
      desc: 'Writing model shards',
    });
  });

  it('headlines per algorithm: DPO margins and accuracies (not rewards/chosen), SFT loss and token accuracy, GRPO reward', () => {
    const log = readFileSync(join(FIX, 'trl-dpo-transformers5.log'), 'utf8');
    assert.deepEqual(
      progressFromLog(log, 'trl', 'dpo').metrics.map((m) => [m.key, m.value]),
      [
        ['rewards/margins', 0.043],
        ['rewards/accuracies', 1],
      ],
    );
    // What `medrl runs` and the runs tree show beside the state.
    assert.equal(stepLabel({ progress: progressFromLog(log, 'trl', 'dpo') } as RunInfo), 'step 3/3 · reward margin 0.0430 · accuracy 1.00');
    // Without the algorithm (a checkpoint's metrics): the first of reward, margin, loss the run logged.
    assert.deepEqual(headlineMetric({ 'rewards/chosen': 0.03, 'rewards/margins': 0.04, loss: 0.68 }, 'trl'), {
      key: 'rewards/margins',
      value: 0.04,
    });
    assert.deepEqual(headlineMetric({ loss: 1.9, mean_token_accuracy: 0.41, entropy: 2 }, 'trl'), { key: 'loss', value: 1.9 });
    assert.deepEqual(headlineMetric({ loss: 0.01, reward: 0.5 }, 'trl'), { key: 'reward', value: 0.5 });
    const sft =
      "{'loss': '2.113', 'grad_norm': '3.1', 'learning_rate': '2e-05', 'entropy': '2.9', 'num_tokens': '1024', 'mean_token_accuracy': '0.4102', 'epoch': '0.5'}\n";
    assert.deepEqual(
      progressFromLog(sft, 'trl', 'sft').metrics.map((m) => m.key),
      ['loss', 'mean_token_accuracy'],
    );
    const grpo = "{'loss': '0.01', 'reward': '0.625', 'reward_std': '0.2', 'epoch': '0.1'}\n";
    assert.deepEqual(
      progressFromLog(grpo, 'trl', 'grpo').metrics.map((m) => [m.key, m.value]),
      [['reward', 0.625]],
    );
    // A diverging loss is shown as NaN, not hidden.
    assert.ok(Number.isNaN(progressFromLog("{'loss': 'nan', 'mean_token_accuracy': '0.1'}\n", 'trl', 'sft').metrics[0]!.value));
  });
});
