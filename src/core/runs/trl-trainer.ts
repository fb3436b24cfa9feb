import { posix } from 'node:path';
import { RUN_FILES } from './run-record';
import { asList, hostPath, modelPath } from './host-paths';
import type { LaunchInputs, OverrideValue, Trainer, TrainerCommand } from './trainer';

/** A spec override as TRL command-line words: `--key value` (lists: `--key a b`; null: the bare flag). */
function flag(key: string, v: OverrideValue): string[] {
  if (v === null) return [`--${key}`];
  if (Array.isArray(v)) return [`--${key}`, ...v.map((x) => String(x))];
  return [`--${key}`, String(v)];
}

/**
 * TRL: `trl sft|grpo|dpo ...` (the TRL CLI starts accelerate itself: `--accelerate_config`, `--num_processes`), or
 * `accelerate launch [--config_file F] script.py ...` for a custom script (`entry`). Output goes to the run folder's
 * output/ (checkpoint-N, completions/) and GRPO logs its completions.
 */
function buildTrlCommand(inp: LaunchInputs): TrainerCommand {
  const { spec, dir, dirs } = inp;
  const processes = (spec.resources?.nodes ?? 1) * Math.max(1, spec.resources?.gpusPerNode ?? 1);
  const output = posix.join(dir, RUN_FILES.trlOutput);
  let pythonPath: string | undefined;
  const common = ['--model_name_or_path', modelPath(spec.model, dirs), ...asList(spec.data.train).flatMap((p) => ['--dataset_name', hostPath(p, dirs)]), '--output_dir', output];
  const reward: string[] = [];
  if (spec.reward && 'path' in spec.reward) {
    if (!inp.rewardFile) throw new Error('internal: the reward file was not uploaded before the command was built');
    // `--reward_funcs module.func` imports from the Python path: the uploaded file's folder goes first on it.
    pythonPath = posix.dirname(inp.rewardFile);
    reward.push('--reward_funcs', `${posix.basename(inp.rewardFile, '.py')}.${spec.reward.function}`);
  } else if (spec.reward) {
    reward.push(spec.algorithm === 'ppo' ? '--reward_model_path' : '--reward_funcs', modelPath(spec.reward.model, dirs));
  }
  if (spec.lora) {
    common.push('--use_peft', 'true', '--lora_r', String(spec.lora.rank));
    if (spec.lora.alpha !== undefined) common.push('--lora_alpha', String(spec.lora.alpha));
    if (spec.lora.targetModules !== undefined) common.push('--lora_target_modules', ...asList(spec.lora.targetModules));
  }
  const completions = spec.algorithm === 'grpo' ? ['--log_completions', 'true'] : [];
  const overrides = Object.entries(spec.overrides ?? {}).flatMap(([k, v]) => flag(k, v));
  if (spec.entry) {
    const launcher = ['accelerate', 'launch', ...(spec.entry.accelerateConfig ? ['--config_file', hostPath(spec.entry.accelerateConfig, dirs)] : []), '--num_processes', String(processes)];
    return { argv: [...launcher, hostPath(spec.entry.script, dirs), ...(spec.entry.args ?? []), ...common, ...reward, ...completions, ...overrides], env: {}, pythonPath };
  }
  if (spec.algorithm === 'ppo') throw new Error('TRL PPO has no `trl` subcommand (it lives in trl.experimental.ppo): give the run an `entry.script`');
  return { argv: ['trl', spec.algorithm, ...common, ...reward, ...completions, '--num_processes', String(processes), ...overrides], env: {}, pythonPath };
}

/** TRL (huggingface/trl): the `trl` CLI, or `accelerate launch` of the run's own script. */
export const trlTrainer: Trainer = {
  framework: 'trl',
  distribution: 'trl',
  command: buildTrlCommand,
  problems: () => [],
};
