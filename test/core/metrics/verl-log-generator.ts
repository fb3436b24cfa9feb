import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { seededRandom } from '../../../src/core/random/seeded-random';

/** The metric keys of one verl GRPO training step, as verl 0.5+ prints them. */
const STEP_KEYS = [
  'training/global_step',
  'training/epoch',
  'actor/entropy',
  'actor/kl_loss',
  'actor/kl_coef',
  'actor/pg_loss',
  'actor/pg_clipfrac',
  'actor/ppo_kl',
  'actor/pg_clipfrac_lower',
  'actor/grad_norm',
  'perf/mfu/actor',
  'perf/max_memory_allocated_gb',
  'perf/max_memory_reserved_gb',
  'perf/cpu_memory_used_gb',
  'actor/lr',
  'critic/score/mean',
  'critic/score/max',
  'critic/score/min',
  'critic/rewards/mean',
  'critic/rewards/max',
  'critic/rewards/min',
  'critic/advantages/mean',
  'critic/advantages/max',
  'critic/advantages/min',
  'critic/returns/mean',
  'critic/returns/max',
  'critic/returns/min',
  'response_length/mean',
  'response_length/max',
  'response_length/min',
  'response_length/clip_ratio',
  'prompt_length/mean',
  'prompt_length/max',
  'prompt_length/min',
  'prompt_length/clip_ratio',
  'timing_s/gen',
  'timing_s/reward',
  'timing_s/old_log_prob',
  'timing_s/ref',
  'timing_s/adv',
  'timing_s/update_actor',
  'timing_s/step',
  'timing_per_token_ms/gen',
  'perf/total_num_tokens',
  'perf/time_per_step',
  'perf/throughput',
];

/** Lines a real verl run prints between steps (Ray workers, vLLM, warnings): the bulk of a real log. */
const NOISE = [
  '(WorkerDict pid=16211, ip=10.4.1.33) INFO 11-23 09:41:07 [executor_base.py:112] # cuda blocks: 30542, # CPU blocks: 4681',
  '(WorkerDict pid=16211, ip=10.4.1.33) /usr/local/lib/python3.10/dist-packages/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned.',
  '(WorkerDict pid=16212, ip=10.4.1.33) Processed prompts: 100%|██████████| 512/512 [00:41<00:00, 12.33it/s, est. speed input: 2311.42 toks/s, output: 5123.87 toks/s]',
  '(TaskRunner pid=15930, ip=10.4.1.33) Training Progress:   4%|▍         | 12/300 [09:32<3:48:41, 47.64s/it]',
  '\x1b[36m(WorkerDict pid=16213, ip=10.4.1.33)\x1b[0m INFO 11-23 09:41:09 [block_manager.py:281] Resetting prefix cache: reclaimed 12.1 GiB of KV cache memory',
  '(raylet) [2026-11-23 09:41:10,001 E 15602 15602] (raylet) file_system_monitor.cc:116: /tmp/ray/session_2026-11-23 is over 95% full, available space: 4.2 GB; capacity: 98.3 GB.',
];

/** One verl console step line (Ray prefix, ANSI colour on the prefix as Ray prints it, NumPy 2 reprs on some values). */
export function verlStepLine(step: number, rng: () => number): string {
  const parts = [`step:${step}`];
  for (const k of STEP_KEYS) {
    let v: string;
    if (k === 'training/global_step') v = String(step);
    else if (k === 'critic/score/mean') v = (Math.min(1, step / 500) * 0.8 + rng() * 0.1).toFixed(6);
    else if (k.endsWith('/max_memory_allocated_gb') || k.startsWith('perf/total')) v = `np.float64(${(rng() * 80).toFixed(4)})`;
    else v = String(rng() * 10 - 1);
    parts.push(`${k}:${v}`);
  }
  return `\x1b[36m(TaskRunner pid=15930, ip=10.4.1.33)\x1b[0m ${parts.join(' - ')}`;
}

/** A deterministic PRNG, so generated logs are the same on every run. */
export const seeded = seededRandom;

/**
 * Writes a verl console log of about `bytes` bytes: each step's metric line among `noisePerStep` lines of Ray/vLLM output.
 * Returns the number of step lines written.
 */
export async function writeVerlLog(path: string, bytes: number, noisePerStep = 60): Promise<number> {
  const out = createWriteStream(path);
  const rng = seeded(42);
  let written = 0;
  let step = 0;
  while (written < bytes) {
    step++;
    const lines: string[] = [];
    for (let i = 0; i < noisePerStep; i++) lines.push(NOISE[(step + i) % NOISE.length]!);
    lines.push(verlStepLine(step, rng));
    const text = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return step;
}

/** 18 more keys verl 0.5+ logs per step (sequence balance, per-token timings, checkpoints): 64 in all with STEP_KEYS. */
const DENSE_EXTRA_KEYS = [
  'global_seqlen/min',
  'global_seqlen/max',
  'global_seqlen/minmax_diff',
  'global_seqlen/balanced_min',
  'global_seqlen/balanced_max',
  'global_seqlen/mean',
  'actor/pg_clipfrac_higher',
  'critic/score/std',
  'response/aborted_ratio',
  'response_length/non_aborted/mean',
  'timing_per_token_ms/adv',
  'timing_per_token_ms/ref',
  'timing_per_token_ms/update_actor',
  'timing_per_token_ms/old_log_prob',
  'timing_s/save_checkpoint',
  'timing_s/testing',
  'perf/max_memory_allocated_gb/rollout',
  'training/steps_per_second',
];
export const DENSE_KEYS = [...STEP_KEYS, ...DENSE_EXTRA_KEYS];

/** Python's repr of a float (what `pprint.pformat` prints): shortest digits, `.0` on integers, `1e-05` below 1e-4. */
export function pyRepr(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${x}.0`;
  if (x !== 0 && Math.abs(x) < 1e-4) return x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(x);
}

/**
 * One dense verl step line as verl's console logger prints it (`verl/utils/logger/aggregate_logger.py`,
 * `concat_dict_to_str`: `step:{step}` then `{k}:{pprint.pformat(v)}` joined with " - "), behind Ray's plain
 * `(TaskRunner pid=1234) ` prefix: 64 metrics, a third full float reprs, the rest rounded as many metrics are
 * (counts, 4-digit means), the learning rate in exponent form.
 */
export function denseStepLine(step: number, rng: () => number): string {
  let line = `(TaskRunner pid=1234) step:${step}`;
  for (let i = 0; i < DENSE_KEYS.length; i++) {
    const k = DENSE_KEYS[i]!;
    let v: number;
    if (k === 'training/global_step') v = step;
    else if (k === 'actor/lr') v = 1e-6 * (1 + (step % 7));
    else if (k.startsWith('global_seqlen/') || k.startsWith('response_length/') || k.startsWith('prompt_length/'))
      v = Math.round(rng() * 4096);
    else if (i % 3 === 0) v = rng() * 10 - 1;
    else v = Math.round((rng() * 10 - 1) * 1e4) / 1e4;
    line += ` - ${k}:${k === 'training/global_step' ? String(step) : pyRepr(v)}`;
  }
  return line;
}

const DENSE_WARNING =
  '(TaskRunner pid=1234) /usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:295: FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated.';

/**
 * Writes a metric-dense verl console log of about `bytes` bytes: one 64-metric step line per step and a warning every
 * 50 steps (issue 19's dense log). Returns the number of step lines written.
 */
export async function writeDenseVerlLog(path: string, bytes: number): Promise<number> {
  const out = createWriteStream(path);
  const rng = seeded(7);
  let written = 0;
  let step = 0;
  let text = '';
  while (written < bytes) {
    step++;
    if (step % 50 === 0) text += `${DENSE_WARNING}\n`;
    const line = `${denseStepLine(step, rng)}\n`;
    written += line.length + (step % 50 === 0 ? DENSE_WARNING.length + 1 : 0);
    text += line;
    if (text.length > 1 << 20 || written >= bytes) {
      if (!out.write(text)) await once(out, 'drain');
      text = '';
    }
  }
  out.end();
  await once(out, 'finish');
  return step;
}

/**
 * Writes a dense verl console log of exactly `steps` steps (writeDenseVerlLog's lines), with `critic/score/mean` set to
 * `spike.value` at `spike.step` alone: a one-step blow-up a chart must not lose at any zoom.
 */
export async function writeDenseVerlSteps(path: string, steps: number, spike?: { step: number; value: number }): Promise<void> {
  const out = createWriteStream(path);
  const rng = seeded(11);
  let text = '';
  for (let step = 1; step <= steps; step++) {
    if (step % 50 === 0) text += `${DENSE_WARNING}\n`;
    let line = denseStepLine(step, rng);
    if (step === spike?.step) line = line.replace(/ - critic\/score\/mean:[^ ]+/, ` - critic/score/mean:${pyRepr(spike.value)}`);
    text += `${line}\n`;
    if (text.length > 1 << 20 || step === steps) {
      if (!out.write(text)) await once(out, 'drain');
      text = '';
    }
  }
  out.end();
  await once(out, 'finish');
}
