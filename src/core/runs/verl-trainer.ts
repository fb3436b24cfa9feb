import { posix } from 'node:path';
import { RUN_FILES } from './run-record';
import { asList, hostPath, modelPath } from './host-paths';
import type { LaunchInputs, OverrideValue, Trainer, TrainerCommand } from './trainer';

/** A value as Hydra's override grammar reads it; strings from the spec's overrides pass through untouched. */
export function hydraValue(v: OverrideValue): string {
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? hydraString(x) : hydraValue(x))).join(',')}]`;
  if (v === null) return 'null';
  return String(v);
}

/** A string we generate (a path, a name) quoted for Hydra when it has characters its grammar treats specially. */
export function hydraString(s: string): string {
  return /^[A-Za-z0-9_./~+@:-]+$/.test(s) ? s : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function files(list: string[]): string {
  return list.length === 1 ? hydraString(list[0]!) : `[${list.map(hydraString).join(',')}]`;
}

/**
 * verl: `python3 -m verl.trainer.main_ppo` with Hydra overrides (GRPO/PPO), or `torchrun -m verl.trainer.fsdp_sft_trainer` (SFT).
 * Trainer outputs go into the run folder (metrics.jsonl via VERL_FILE_LOGGER_PATH, rollouts/, validation/, checkpoints/) so
 * metrics, replay and checkpoints find them; the spec's own `overrides` come last and win.
 */
function buildVerlCommand(inp: LaunchInputs): TrainerCommand {
  const { spec, dir, dirs } = inp;
  const res = { nodes: spec.resources?.nodes ?? 1, gpus: spec.resources?.gpusPerNode ?? 1 };
  const train = asList(spec.data.train).map((p) => hostPath(p, dirs));
  const val = asList(spec.data.val).map((p) => hostPath(p, dirs));
  const keys = new Map<string, string>();
  const set = (k: string, v: string) => keys.set(k, v);
  const env = { VERL_FILE_LOGGER_PATH: posix.join(dir, RUN_FILES.metrics) };

  if (spec.algorithm === 'sft') {
    set('data.train_files', files(train));
    if (val.length) set('data.val_files', files(val));
    set('model.partial_pretrain', hydraString(modelPath(spec.model, dirs)));
    if (spec.lora) {
      set('model.lora_rank', String(spec.lora.rank));
      if (spec.lora.alpha !== undefined) set('model.lora_alpha', String(spec.lora.alpha));
      if (spec.lora.targetModules !== undefined) set('model.target_modules', hydraValue(spec.lora.targetModules));
    }
    setTrainer(set, inp, res);
    for (const [k, v] of Object.entries(spec.overrides ?? {})) set(k, hydraValue(v));
    const argv = ['torchrun', `--nnodes=${res.nodes}`, `--nproc_per_node=${Math.max(1, res.gpus)}`, '-m', 'verl.trainer.fsdp_sft_trainer'];
    return { argv: [...argv, ...[...keys].map(([k, v]) => `${k}=${v}`)], env };
  }

  set('algorithm.adv_estimator', spec.algorithm === 'grpo' ? 'grpo' : 'gae');
  set('data.train_files', files(train));
  if (val.length) set('data.val_files', files(val));
  set('actor_rollout_ref.model.path', hydraString(modelPath(spec.model, dirs)));
  set('actor_rollout_ref.rollout.name', spec.rollout?.engine ?? 'vllm');
  if (spec.rollout?.n !== undefined) set('actor_rollout_ref.rollout.n', String(spec.rollout.n));
  if (spec.lora) {
    set('actor_rollout_ref.model.lora_rank', String(spec.lora.rank));
    if (spec.lora.alpha !== undefined) set('actor_rollout_ref.model.lora_alpha', String(spec.lora.alpha));
    if (spec.lora.targetModules !== undefined) set('actor_rollout_ref.model.target_modules', hydraValue(spec.lora.targetModules));
  }
  if (spec.reward && 'path' in spec.reward) {
    if (!inp.rewardFile) throw new Error('internal: the reward file was not uploaded before the command was built');
    set('custom_reward_function.path', hydraString(inp.rewardFile));
    set('custom_reward_function.name', spec.reward.function);
  } else if (spec.reward) {
    set('reward_model.enable', 'True');
    set('reward_model.model.path', hydraString(modelPath(spec.reward.model, dirs)));
  }
  setTrainer(set, inp, res);
  set('trainer.rollout_data_dir', hydraString(posix.join(dir, RUN_FILES.rollouts)));
  set('trainer.validation_data_dir', hydraString(posix.join(dir, RUN_FILES.validation)));
  for (const [k, v] of Object.entries(spec.overrides ?? {})) set(k, hydraValue(v));
  return { argv: ['python3', '-m', 'verl.trainer.main_ppo', ...[...keys].map(([k, v]) => `${k}=${v}`)], env };
}

function setTrainer(set: (k: string, v: string) => void, inp: LaunchInputs, res: { nodes: number; gpus: number }): void {
  set('trainer.project_name', 'medrl');
  set('trainer.experiment_name', inp.id);
  set('trainer.nnodes', String(res.nodes));
  set('trainer.n_gpus_per_node', String(res.gpus));
  // console for output.log, file for metrics.jsonl: both are what the metrics view reads.
  set('trainer.logger', "['console','file']");
  set('trainer.default_local_dir', hydraString(posix.join(inp.dir, RUN_FILES.checkpoints)));
}

/** verl (volcengine/verl): Hydra overrides on `verl.trainer.main_ppo` / `fsdp_sft_trainer`. */
export const verlTrainer: Trainer = {
  framework: 'verl',
  distribution: 'verl',
  command: buildVerlCommand,
  problems: () => [],
};
