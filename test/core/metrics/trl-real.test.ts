import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { progressFromLog } from '../../../src/core/runs/log-progress';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { groupStats } from '../../../src/core/episodes/signals';
import { checkAgainstTrainerState } from './trainer-state-check';

/**
 * Real TRL 1.10 runs (transformers 5.17, on an H100: test/gpu/capture-trl-fixtures.sh), weights left out. Each run's
 * output.log is read as `medrl metrics` and the runs tree read it, and compared with what TRL itself recorded: the newest
 * checkpoint's trainer_state.json log_history (the ground truth per step) and its completions parquet files.
 */
const RUNS = join(__dirname, '../../fixtures/trl-real');
const host = new LocalHost();

/** What each captured run was started with (capture-trl-fixtures.sh): algorithm, max_steps, the headline keys TRL logs. */
const EXPECT: Record<string, { algorithm: string; maxSteps: number; headline: string[] }> = {
  sft: { algorithm: 'sft', maxSteps: 8, headline: ['loss', 'mean_token_accuracy'] },
  // Started with --resume_from_checkpoint, which the trl CLI never reads: it trains from step 1 again.
  'sft-resume': { algorithm: 'sft', maxSteps: 8, headline: ['loss', 'mean_token_accuracy'] },
  dpo: { algorithm: 'dpo', maxSteps: 6, headline: ['rewards/margins', 'rewards/accuracies'] },
  'grpo-fn': { algorithm: 'grpo', maxSteps: 6, headline: ['reward'] },
  'grpo-rm': { algorithm: 'grpo', maxSteps: 6, headline: ['reward'] },
  'grpo-lora': { algorithm: 'grpo', maxSteps: 6, headline: ['reward'] },
};

function newestTrainerState(run: string): string {
  const out = join(RUNS, run, 'output');
  const ckpts = readdirSync(out)
    .filter((n) => /^checkpoint-\d+$/.test(n))
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]));
  assert.ok(ckpts.length, `${out}: no checkpoint`);
  return join(out, ckpts[0]!, 'trainer_state.json');
}

describe('real TRL 1.10 runs: the readers against what TRL recorded', () => {
  it('the captured runs are there', () => {
    assert.ok(existsSync(RUNS), `${RUNS}: missing (test/gpu/capture-trl-fixtures.sh makes it)`);
    for (const run of Object.keys(EXPECT)) assert.ok(existsSync(join(RUNS, run, 'output.log')), `${run}/output.log`);
  });

  for (const [run, want] of Object.entries(EXPECT)) {
    it(`${run}: every step of trainer_state.json's log_history, at its step, with its values; progress from the training bar; ${want.headline.join(' and ')} as headline`, async () => {
      const log = join(RUNS, run, 'output.log');
      const series = await checkAgainstTrainerState(log, newestTrainerState(run));
      assert.deepEqual(
        series.steps,
        Array.from({ length: want.maxSteps }, (_, i) => i + 1),
        'logging_steps 1: one row per step',
      );
      const text = readFileSync(log, 'utf8');
      const p = progressFromLog(text, 'trl', want.algorithm);
      assert.deepEqual([p.step, p.totalSteps], [want.maxSteps, want.maxSteps], 'the training bar, not "Writing model shards 1/1"');
      assert.deepEqual(
        p.metrics.map((m) => m.key),
        want.headline,
      );
      // The runs tree reads a 4 KB tail: the same answer at the end of the run.
      const tail = progressFromLog(text.slice(-4096), 'trl', want.algorithm);
      assert.deepEqual([tail.step, tail.totalSteps], [want.maxSteps, want.maxSteps]);
    });
  }

  for (const run of ['grpo-fn', 'grpo-rm', 'grpo-lora']) {
    it(`${run}: completions parquet: clean turns from the special-token-free prompt; groups by prompt, num_generations each`, async () => {
      const [c] = await discoverEpisodes(host, join(RUNS, run));
      assert.equal(c?.name, 'completions');
      assert.deepEqual(
        c.files.map((f) => f.step),
        [1, 2, 3, 4, 5, 6],
      );
      for (const f of c.files) {
        const t = await f.index();
        assert.ok(t.length > 0, f.path);
        for (let g = 0; g < t.groupCount; g++)
          assert.equal(groupStats(t, g).size % 4, 0, `${f.path}: group ${g} is num_generations (4) per prompt`);
        for (let i = 0; i < t.length; i++) {
          const ep = await f.read(i);
          assert.ok(
            ep.raw.prompt.startsWith('system\n') || ep.raw.prompt.startsWith('user\n'),
            `${f.path} row ${i}: the prompt as TRL decoded it (special tokens removed): ${JSON.stringify(ep.raw.prompt.slice(0, 60))}`,
          );
          const roles = ep.turns.map((x) => x.role);
          assert.equal(roles.at(-1), 'assistant', `${f.path} row ${i}`);
          assert.ok(
            roles.slice(0, -1).every((r) => r === 'system' || r === 'user'),
            `${f.path} row ${i}: ${roles.join(',')}`,
          );
          for (const turn of ep.turns.slice(0, -1))
            assert.ok(
              !/^(system|user|assistant)\n/.test(turn.content) && !/\n(system|user|assistant)\n?$/.test(turn.content),
              `${f.path} row ${i}: role words left in ${JSON.stringify(turn.content.slice(0, 80))}`,
            );
          assert.equal(ep.turns.at(-1)!.content, ep.raw.response.trim());
        }
      }
    });
  }
});
