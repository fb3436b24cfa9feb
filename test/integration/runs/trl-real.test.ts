import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT, VERL_PYTHON } from './run-fixture';

/**
 * Real TRL on this machine's CPU, through the `medrl` CLI: the GPU harness (test/gpu/run.sh) with no GPU. It submits
 * real `trl sft` (with evaluation), `trl grpo` (a reward function, a reward model, LoRA), `trl dpo` and an SFT resumed from a checkpoint of
 * the first, on tiny random Qwen2 models built offline, to the `local` host, waits for them, and checks what `medrl
 * runs|metrics|checkpoints|episodes` say against what TRL wrote (check_results.py: trainer_state.json's log_history
 * step by step, every checkpoint-N, every completion row of every step with its reward).
 * TRL, torch (CPU), transformers and accelerate come from the project's Python environment, .tools/verl-venv
 * (scripts/setup-verl-check.sh).
 */
const VENV_BIN = dirname(VERL_PYTHON);
const RUNS = ['sft', 'grpo-fn', 'grpo-rm', 'dpo', 'grpo-lora', 'sft-resume'];

describe('real TRL on CPU, submitted and read back through the medrl CLI (test/gpu/run.sh with MEDRL_HARNESS_CPU=1)', () => {
  it('the project environment has TRL (scripts/setup-verl-check.sh)', () => {
    assert.ok(existsSync(join(VENV_BIN, 'trl')), `no trl in ${VENV_BIN}`);
  });

  it('SFT, GRPO (a reward function, a reward model, LoRA), DPO and a resumed SFT run for real; runs, metrics, checkpoints and episodes match what TRL wrote', () => {
    const work = mkdtempSync(join(tmpdir(), 'medrl-trl-real-'));
    const r = spawnSync('bash', [join(ROOT, 'test', 'gpu', 'run.sh'), work], {
      encoding: 'utf8',
      timeout: 900_000,
      env: {
        ...process.env,
        PATH: `${VENV_BIN}:${process.env.PATH ?? ''}`,
        VIRTUAL_ENV: dirname(VENV_BIN),
        MEDRL_HARNESS_CPU: '1',
        MEDRL_HARNESS_RUNS: RUNS.join(' '),
        MEDRL_GPU_WAIT: '600',
        OUT: join(work, 'results'),
      },
    });
    const check = existsSync(join(work, 'results', 'check.txt')) ? readFileSync(join(work, 'results', 'check.txt'), 'utf8') : '';
    assert.equal(r.status, 0, `run.sh exited ${r.status}:\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-2000)}`);
    // One summary line per run, each PASS, and the count of runs the harness submitted.
    for (const name of RUNS) assert.match(check, new RegExp(`^PASS ${name} \\(`, 'm'), `${name} in:\n${check}`);
    assert.match(check, new RegExp(`^${RUNS.length}/${RUNS.length} runs passed$`, 'm'));
  });
});
