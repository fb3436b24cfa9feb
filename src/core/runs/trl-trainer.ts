import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { RUN_FILES } from './run-record';
import { asList, hostPath, modelPath } from './host-paths';
import { packageRoot } from '../package-root';
import type { Problem } from '../errors/located-error';
import type { RunSpec } from './run-spec';
import { versionAtLeast, type LaunchInputs, type OverrideValue, type Trainer, type TrainerCommand } from './trainer';

/** The TRL release every flag here was checked against (its sources, and real runs on an H100: docs/trainers.md, Verified on a GPU). */
const TRL_CHECKED = [1, 10];

/** Files a TRL run gets in its run folder besides the common ones. */
export const TRL_FILES = {
  /** TRL's `--config` YAML holding the data files as a dataset mixture (only when the data are files). */
  config: 'trl-config.yaml',
  /** python/trl_resume.py, the `trl` CLI that really resumes (only for a run that resumes). */
  resume: 'trl_resume.py',
} as const;

/**
 * datasets' builder for a data file, by extension (datasets 4.8 packaged_modules/__init__.py, _EXTENSION_TO_MODULE).
 * `.tsv` is left out: its builder needs `sep`, which TRL's DatasetConfig cannot pass.
 */
const BUILDERS: Record<string, string> = {
  '.json': 'json',
  '.jsonl': 'json',
  '.ndjson': 'json',
  '.parquet': 'parquet',
  '.csv': 'csv',
  '.arrow': 'arrow',
  '.txt': 'text',
};

/** The datasets builder that reads this path as a data file; undefined for a folder (or anything else). */
function dataFileBuilder(path: string): string | undefined {
  return BUILDERS[posix.extname(path)];
}

/** The `trl` subcommands (trl/cli/commands/__init__.py, TRL 1.10) MedRL's algorithms map to; PPO has none. */
const SUBCOMMANDS: Partial<Record<RunSpec['algorithm'], string>> = { sft: 'sft', grpo: 'grpo', dpo: 'dpo' };

/** A spec override as TRL command-line words: `--key value` (lists: `--key a b`; null: the bare flag). */
function flag(key: string, v: OverrideValue): string[] {
  if (v === null) return [`--${key}`];
  if (Array.isArray(v)) return [`--${key}`, ...v.map((x) => String(x))];
  return [`--${key}`, String(v)];
}

/**
 * The training data as TRL flags. `--dataset_name` goes to `datasets.load_dataset(NAME)`, which takes a folder or a hub id
 * and refuses the path of one file ("Couldn't find any data file at ...": datasets 4.8 load.py, dataset_module_factory).
 * So data files (and several entries) go as a generated `--config` YAML with TRL's dataset mixture: `datasets:` is a list
 * of DatasetConfig (path = the builder, data_files = the file, split), loaded by trl.get_dataset() with
 * load_dataset(path=, data_files=, split=) and concatenated into the `train` split (trl/scripts/utils.py,
 * DatasetMixtureConfig; the sft/grpo/dpo scripts use it when `datasets` is set, TRL 1.10). It is written as JSON, which
 * TrlParser's yaml.safe_load reads. Run on an H100 with TRL 1.10 (json and parquet files, one mixture).
 */
function trlData(paths: string[], dir: string): { argv: string[]; files: Record<string, string> } {
  if (paths.length === 1 && !dataFileBuilder(paths[0]!)) return { argv: ['--dataset_name', paths[0]!], files: {} };
  const datasets = paths.map((p) => {
    const builder = dataFileBuilder(p);
    return builder ? { path: builder, data_files: p, split: 'train' } : { path: p, split: 'train' };
  });
  const text = `# MedRL Studio: the run's data as TRL's dataset mixture (DatasetMixtureConfig, trl/scripts/utils.py), read by --config.\n${JSON.stringify({ datasets }, null, 2)}\n`;
  return { argv: ['--config', posix.join(dir, TRL_FILES.config)], files: { [TRL_FILES.config]: text } };
}

/**
 * W&B through transformers' report_to; `none` otherwise, so no installed tracker gets the run by surprise (report_to
 * defaults to "all" in transformers 4.x, "none" in 5.x: training_args.py).
 */
function reporting(inp: LaunchInputs): { argv: string[]; env: Record<string, string> } {
  const w = inp.spec.wandb;
  if (!w) return { argv: ['--report_to', 'none'], env: {} };
  // transformers' WandbCallback reads WANDB_PROJECT / WANDB_ENTITY; --run_name names the W&B run.
  return {
    argv: ['--report_to', 'wandb', '--run_name', inp.id],
    env: { WANDB_PROJECT: w.project, ...(w.entity ? { WANDB_ENTITY: w.entity } : {}) },
  };
}

/**
 * A reward function as `module.function`, importable once the uploaded file's folder is first on PYTHONPATH (how
 * `--reward_funcs` and MEDRL_REWARD_FUNCTION are loaded: trl/scripts/grpo.py, TRL 1.10).
 */
function rewardFunction(inp: LaunchInputs, fn: string): { name: string; pythonPath: string } {
  if (!inp.rewardFile) throw new Error('internal: the reward file was not uploaded before the command was built');
  return { name: `${posix.basename(inp.rewardFile, '.py')}.${fn}`, pythonPath: posix.dirname(inp.rewardFile) };
}

/**
 * A spec's own script (`entry`): `accelerate launch [--config_file F] --num_processes N script.py ARGS`. MedRL adds
 * nothing to the script's command line but `entry.args` and the spec's overrides (a script has its own flags and may
 * refuse TRL's); what the run provides comes as environment: MEDRL_MODEL, MEDRL_TRAIN_FILES (paths joined by `:`),
 * MEDRL_OUTPUT_DIR, and MEDRL_REWARD_MODEL or MEDRL_REWARD_FUNCTION (`module.function`, its folder on PYTHONPATH).
 */
function entryCommand(inp: LaunchInputs, entry: NonNullable<RunSpec['entry']>, processes: number, output: string): TrainerCommand {
  const { spec, dirs } = inp;
  const env: Record<string, string> = {
    MEDRL_MODEL: modelPath(spec.model, dirs),
    MEDRL_TRAIN_FILES: asList(spec.data.train)
      .map((p) => hostPath(p, dirs))
      .join(':'),
    MEDRL_OUTPUT_DIR: output,
  };
  let pythonPath: string | undefined;
  if (spec.reward && 'path' in spec.reward) {
    const fn = rewardFunction(inp, spec.reward.function);
    pythonPath = fn.pythonPath;
    env.MEDRL_REWARD_FUNCTION = fn.name;
  } else if (spec.reward) {
    env.MEDRL_REWARD_MODEL = modelPath(spec.reward.model, dirs);
  }
  if (spec.wandb) Object.assign(env, reporting(inp).env, { WANDB_NAME: inp.id });
  const launcher = [
    'accelerate',
    'launch',
    ...(entry.accelerateConfig ? ['--config_file', hostPath(entry.accelerateConfig, dirs)] : []),
    '--num_processes',
    String(processes),
  ];
  const overrides = Object.entries(spec.overrides ?? {}).flatMap(([k, v]) => flag(k, v));
  return { argv: [...launcher, hostPath(entry.script, dirs), ...(entry.args ?? []), ...overrides], env, pythonPath };
}

/** The shipped python/trl_resume.py (uploaded into the run folder of a run that resumes). */
function resumeWrapper(): string {
  return readFileSync(join(packageRoot(__dirname), 'python', TRL_FILES.resume), 'utf8');
}

/**
 * TRL: `trl sft|grpo|dpo ...` (the TRL CLI starts accelerate itself: `--accelerate_config`, `--num_processes`), or
 * `accelerate launch` of the spec's own script (`entry`). Output goes to the run folder's output/ (checkpoint-N,
 * completions/, and the final model, which TRL's scripts save into output_dir), GRPO logs its completions.
 */
function buildTrlCommand(inp: LaunchInputs): TrainerCommand {
  const { spec, dir, dirs } = inp;
  const processes = (spec.resources?.nodes ?? 1) * Math.max(1, spec.resources?.gpusPerNode ?? 1);
  const output = posix.join(dir, RUN_FILES.trlOutput);
  if (spec.entry) return entryCommand(inp, spec.entry, processes, output);
  const sub = SUBCOMMANDS[spec.algorithm];
  if (!sub) throw new Error('TRL PPO has no `trl` subcommand (it lives in trl.experimental.ppo): give the run an `entry.script`');
  const data = trlData(
    asList(spec.data.train).map((p) => hostPath(p, dirs)),
    dir,
  );
  const files = { ...data.files };
  let pythonPath: string | undefined;
  const words = ['--model_name_or_path', modelPath(spec.model, dirs), ...data.argv, '--output_dir', output];
  const reward = spec.algorithm === 'grpo' ? spec.reward : undefined;
  if (reward && 'path' in reward) {
    const fn = rewardFunction(inp, reward.function);
    pythonPath = fn.pythonPath;
    words.push('--reward_funcs', fn.name);
  } else if (reward) {
    // GRPOScriptArguments.reward_model_name_or_path (trl/scripts/grpo.py, TRL 1.10): loaded with num_labels=1, scored as logits[:, 0].
    words.push('--reward_model_name_or_path', modelPath(reward.model, dirs));
  }
  if (spec.algorithm === 'grpo') {
    if (spec.rollout?.n !== undefined) words.push('--num_generations', String(spec.rollout.n));
    // The completions parquet is what replay reads; printing them too (rich tables, TRL 1.10 grpo_trainer.py log())
    // would put model output on medical data into output.log and push the last step's dict out of the runs listing's
    // log tail. num_completions_to_print 0 skips only the print (print_prompt_completions_sample returns at <= 0).
    words.push('--log_completions', 'true', '--num_completions_to_print', '0');
  }
  if (spec.lora) {
    // ModelConfig (trl/trainer/model_config.py, TRL 1.10): use_peft, lora_r, lora_alpha (int), lora_target_modules (list).
    words.push('--use_peft', 'true', '--lora_r', String(spec.lora.rank));
    if (spec.lora.alpha !== undefined) words.push('--lora_alpha', String(spec.lora.alpha));
    if (spec.lora.targetModules !== undefined) words.push('--lora_target_modules', ...asList(spec.lora.targetModules));
  }
  const report = reporting(inp);
  words.push(...report.argv, '--num_processes', String(processes), ...Object.entries(spec.overrides ?? {}).flatMap(([k, v]) => flag(k, v)));
  if (spec.overrides?.resume_from_checkpoint != null) {
    // The trl scripts never pass resume_from_checkpoint to trainer.train(): the wrapper does (python/trl_resume.py).
    files[TRL_FILES.resume] = resumeWrapper();
    return { argv: ['python3', posix.join(dir, TRL_FILES.resume), sub, ...words], env: report.env, pythonPath, files };
  }
  return { argv: ['trl', sub, ...words], env: report.env, pythonPath, files };
}

/** The built-in reward names of trl/scripts/grpo.py (TRL 1.10); any other value must be a dotted import path. */
const BUILTIN_REWARDS = ['accuracy_reward', 'reasoning_accuracy_reward', 'think_format_reward', 'get_soft_overlong_punishment'];

/** Flags MedRL sets itself: an override of them would break the run or the run folder's layout (why, for the message). */
const OWN_FLAGS: Record<string, string> = {
  model_name_or_path: 'set model instead',
  dataset_name: 'set data.train instead',
  config: "the run's --config carries its data files: set data.train",
  output_dir: "TRL writes into the run folder's output/, where checkpoints and completions are read",
  reward_model_name_or_path: 'set reward.model instead',
};

function num(v: OverrideValue | undefined, fallback: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : fallback;
}

/** What real TRL would refuse in the spec (or silently ignore), found before anything reaches a host. */
function trlProblems(spec: RunSpec, specFile: string): Problem[] {
  const problems: Problem[] = [];
  const add = (field: string, severity: Problem['severity'], message: string) =>
    problems.push({ file: specFile, field, severity, message });
  const o = spec.overrides ?? {};
  if (spec.reward && 'path' in spec.reward) {
    const stem = posix.basename(spec.reward.path.replace(/\\/g, '/'), '.py');
    // TRL imports `module.function` (importlib.import_module, trl/scripts/grpo.py); MEDRL_REWARD_FUNCTION is the same.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(stem))
      add(
        'reward.path',
        'error',
        `TRL imports the reward file as the Python module "${stem}", which is not a valid module name: rename the file with letters, digits and _ only`,
      );
    if (!spec.reward.path.endsWith('.py'))
      add('reward.path', 'error', 'the reward file must be a .py file: TRL imports it as a Python module');
  } else if (spec.reward && /verifier/i.test(spec.reward.model)) {
    add(
      'reward.model',
      'warning',
      `TRL scores a reward model on prompt + completion as logits[:, 0] of a one-label model; a verifier that compares the completion with a reference answer (HuatuoGPT-o1's medical_o1_verifier has two labels) needs a reward function: reward: {path: configs/rewards/medical_verifier.py, function: medical_verifier}`,
    );
  }
  if (spec.entry) {
    if (o.accelerate_config !== undefined)
      add(
        'overrides.accelerate_config',
        'error',
        "overrides go to your script's command line, which does not take accelerate_config: set entry.accelerateConfig",
      );
    if (o.resume_from_checkpoint != null)
      add(
        'overrides.resume_from_checkpoint',
        'warning',
        'your script gets --resume_from_checkpoint: it resumes only if it passes that to trainer.train(resume_from_checkpoint=...)',
      );
    return problems;
  }
  if (spec.reward && spec.algorithm !== 'grpo') add('reward', 'warning', `trl ${spec.algorithm} takes no reward: it is not passed`);
  for (const [key, why] of Object.entries(OWN_FLAGS)) {
    if (o[key] !== undefined) add(`overrides.${key}`, 'error', `MedRL sets --${key} itself: remove overrides.${key} (${why})`);
  }
  for (const name of asList(
    o.reward_funcs === undefined || o.reward_funcs === null
      ? undefined
      : Array.isArray(o.reward_funcs)
        ? o.reward_funcs.map(String)
        : String(o.reward_funcs),
  )) {
    if (BUILTIN_REWARDS.includes(name) || name.includes('.')) continue;
    add(
      'overrides.reward_funcs',
      'error',
      `TRL refuses the reward function "${name}": it takes ${BUILTIN_REWARDS.join(', ')} or an import path module.function (trl/scripts/grpo.py); a reward model goes in reward.model, your own function in reward.path`,
    );
  }
  const files = asList(spec.data.train);
  for (const p of files) {
    const ext = posix.extname(p);
    if (ext && !dataFileBuilder(p))
      add(
        'data.train',
        'warning',
        `${p}: TRL's datasets reads files ending in ${Object.keys(BUILDERS).join(' ')}; a path ending in ${ext} is passed as a folder or hub id`,
      );
  }
  const mixture = files.length > 1 || files.some((p) => dataFileBuilder(p));
  if (mixture && o.eval_strategy !== undefined && o.eval_strategy !== 'no' && o.test_split_size === undefined) {
    add(
      'overrides.eval_strategy',
      'error',
      'data files load as one train split (TRL dataset mixture), so evaluation finds no test split: set overrides.test_split_size (e.g. 0.05)',
    );
  }
  if (spec.lora?.alpha !== undefined && !Number.isInteger(spec.lora.alpha))
    add('lora.alpha', 'error', `TRL's lora_alpha is an integer (ModelConfig, trl/trainer/model_config.py): ${spec.lora.alpha} is refused`);
  if (spec.algorithm === 'grpo') {
    // GRPOConfig.__post_init__ (trl/trainer/grpo_config.py, TRL 1.10): the generation batch holds whole groups.
    const processes = (spec.resources?.nodes ?? 1) * Math.max(1, spec.resources?.gpusPerNode ?? 1);
    const generations = num(o.num_generations, spec.rollout?.n ?? 8);
    const perDevice = num(o.per_device_train_batch_size, 8);
    const steps = num(o.steps_per_generation, num(o.gradient_accumulation_steps, 1));
    const batch =
      o.generation_batch_size !== undefined && o.generation_batch_size !== null
        ? num(o.generation_batch_size, 0)
        : perDevice * processes * steps;
    if (generations < 2)
      add(
        o.num_generations !== undefined ? 'overrides.num_generations' : 'rollout.n',
        'error',
        `GRPO needs at least 2 generations per prompt (TRL refuses ${generations})`,
      );
    else if (batch % generations !== 0) {
      add(
        o.generation_batch_size !== undefined ? 'overrides.generation_batch_size' : 'overrides.per_device_train_batch_size',
        'error',
        `TRL refuses a generation batch of ${batch} (per_device_train_batch_size ${perDevice} × ${processes} processes × ${steps} steps per generation) that is not a multiple of num_generations ${generations}: change per_device_train_batch_size, gradient_accumulation_steps or num_generations`,
      );
    }
  }
  return problems;
}

/** TRL (huggingface/trl): the `trl` CLI, or `accelerate launch` of the run's own script. */
export const trlTrainer: Trainer = {
  framework: 'trl',
  distribution: 'trl',
  command: buildTrlCommand,
  problems: trlProblems,
  // A TrainingArguments field; python/trl_resume.py makes the trl scripts pass it to trainer.train().
  resumeOverrides: (checkpointPath) => ({ resume_from_checkpoint: checkpointPath }),
  versionProblems: (version, _spec, specFile) =>
    // The release is what counts: 1.10.0.dev0 is the build these flags ran on.
    versionAtLeast(/^v?\d+(?:\.\d+)*/.exec(version)?.[0] ?? version, TRL_CHECKED)
      ? []
      : [
          {
            file: specFile,
            field: 'framework',
            severity: 'warning',
            message: `the host has TRL ${version}; MedRL's TRL flags were checked against TRL ${TRL_CHECKED.join('.')} (and run on a GPU with it): an older TRL may refuse some of them (see launch.sh)`,
          },
        ],
  installCheck: (spec) =>
    spec.entry
      ? { test: 'command -v accelerate', what: 'accelerate (the accelerate command)' }
      : { test: 'command -v trl', what: 'trl (the trl command)' },
  // `trl SUB` and `accelerate launch` take accelerate's machine flags once per node.
  multiNode: () => 'accelerate',
};
