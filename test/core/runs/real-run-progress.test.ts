import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_TAIL_BYTES } from '../../../src/core/runs/list-runs';
import { progressFromLog } from '../../../src/core/runs/log-progress';

/** Run folders the product's own CLI made on a real H100 with real TRL 1.10 (test/gpu/run.sh; weights left out). */
const RUNS = join(__dirname, '../../fixtures/trl-real/medrl/runs');

interface LoggedStep {
  step: number;
  [key: string]: number;
}

/** trainer_state.json of the last checkpoint: TRL's own record of every logged step (the ground truth). */
function lastState(dir: string): { global_step: number; max_steps: number; log_history: LoggedStep[] } {
  const out = join(dir, 'output');
  const last = readdirSync(out)
    .filter((f) => /^checkpoint-\d+$/.test(f))
    .sort((a, b) => Number(a.slice(11)) - Number(b.slice(11)))
    .pop()!;
  return JSON.parse(readFileSync(join(out, last, 'trainer_state.json'), 'utf8'));
}

describe('the runs listing on real TRL run folders (what `medrl runs` reads: the last 4 KB of output.log)', () => {
  for (const id of readdirSync(RUNS)) {
    it(id, () => {
      const dir = join(RUNS, id);
      const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { framework: 'trl'; algorithm: string };
      const log = readFileSync(join(dir, 'output.log'));
      const tail = log.subarray(Math.max(0, log.length - LOG_TAIL_BYTES)).toString('utf8');
      const p = progressFromLog(tail, record.framework, record.algorithm);
      const state = lastState(dir);
      assert.equal(p.step, state.global_step, 'the training bar, not "Writing model shards 1/1"');
      assert.equal(p.totalSteps, state.max_steps);
      assert.ok(p.metrics.length > 0, `a headline for ${record.algorithm} is shown`);
      for (const m of p.metrics) {
        const logged = state.log_history.filter((h) => typeof h[m.key] === 'number').pop();
        assert.ok(logged, `${m.key} is in trainer_state.json`);
        // The console prints 4 significant digits.
        assert.ok(
          Math.abs(m.value - logged[m.key]!) <= 1e-3 * Math.max(1, Math.abs(logged[m.key]!)),
          `${m.key}: ${m.value} vs ${logged[m.key]}`,
        );
      }
    });
  }
});
