import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run as runCli } from './run-cli';

const FIX = join(__dirname, '../fixtures/metrics');

const run = (argv: string[]) => runCli(argv, FIX);

describe('medrl metrics', () => {
  it('--json: one object per step, in step order; a resumed run keeps the later values', async () => {
    const r = await run(['metrics', 'verl-resumed.log', '--json']);
    assert.equal(r.code, 0, r.err);
    const rows = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number> });
    assert.deepEqual(
      rows.map((x) => x.step),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(rows[3]!.metrics['critic/score/mean'], 0.54);
  });

  it('a run folder: the headline table; problems go to stderr with their line and exit code 1', async () => {
    const ok = await run(['metrics', 'trl-run']);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /trainer_state\.json \(trl\): 4 step\(s\)/);
    assert.match(ok.out, /Reward: reward/);
    assert.match(ok.out, /Loss: loss/);
    assert.match(ok.out, /^\s+10\s+0\.5\s+0\.0123\s+0\.004/m);
    const bad = await run(['metrics', 'verl-metrics.jsonl']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /verl-metrics\.jsonl:3: warning: verl metrics record: not valid JSON/);
    assert.match(bad.out, /5 step\(s\)/);
  });

  it('--json and the table show a diverging loss: NaN and infinities as "NaN", "Infinity", "-Infinity"; DPO headlines are margins and accuracies', async () => {
    const r = await run(['metrics', 'trl-dpo-transformers5.log', '--json']);
    assert.equal(r.code, 0, r.err);
    const rows = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; metrics: Record<string, number | string> });
    assert.deepEqual(
      rows.map((x) => x.step),
      [1, 2, 3],
    );
    assert.equal(rows[1]!.metrics.loss, 'NaN');
    assert.equal(rows[1]!.metrics.grad_norm, 'Infinity');
    assert.equal(rows[1]!.metrics['logps/chosen'], '-Infinity');
    assert.equal(rows[2]!.metrics.train_loss, 'NaN');
    const table = await run(['metrics', 'trl-dpo-transformers5.log']);
    assert.match(table.out, /Reward margin: rewards\/margins/);
    assert.match(table.out, /Accuracy: rewards\/accuracies/);
    assert.doesNotMatch(table.out, /rewards\/chosen/);
    assert.match(table.out, /^\s+2\s+0\.0163\s+0\.75\s+NaN/m);
  });

  it('a missing path fails with where it looked; no argument is bad usage', async () => {
    const r = await run(['metrics', 'nope.log']);
    assert.equal(r.code, 1);
    assert.match(r.err, /no such file or folder: .*nope\.log/);
    assert.equal((await run(['metrics'])).code, 2);
  });
});
