import { z } from 'zod';
import { schedulerSchema } from '../config/workspace-config';

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
/** A trainer key's value passed through untouched: Hydra accepts scalars and lists. */
const overrideValue = z.union([scalar, z.array(scalar)]);

const rewardSchema = z.union([
  z
    .strictObject({
      path: z.string().min(1).describe('Python file with the reward function, relative to the workspace (uploaded with the run).'),
      function: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
        .default('compute_score')
        .describe(
          'Function name (verl: compute_score(data_source, solution_str, ground_truth, extra_info); TRL: f(prompts, completions, **kw)).',
        ),
    })
    .describe('A reward function.'),
  z
    .strictObject({
      model: z.string().min(1).describe('A reward/verifier model (sequence classification), path or hub id.'),
    })
    .describe('A reward model.'),
]);

const serviceSchema = z
  .strictObject({
    kind: z.enum(['vllm', 'sglang', 'trl-vllm-serve']).default('vllm'),
    model: z.string().min(1).describe('Model path or id to serve.'),
    servedModelName: z.string().optional().describe('Name clients ask for (vLLM --served-model-name).'),
    host: z.string().optional().describe("Host (from medrl.yaml) to start it on; default: the run's host."),
    bind: z
      .ipv4()
      .optional()
      .describe(
        'Address the server listens on. Default: 127.0.0.1 when the trainer runs on the same machine (ssh scheduler, same host), else 0.0.0.0 so the trainer can reach it.',
      ),
    address: z
      .string()
      .regex(/^[A-Za-z0-9.-]+$/, 'a host name or IPv4 address')
      .optional()
      .describe(
        "Name or address the trainer reaches the service's host by, when it is bound beyond 127.0.0.1. Default: what `hostname -f` says there.",
      ),
    gpus: z
      .union([z.int().min(0), z.array(z.int().min(0)).min(1)])
      .optional()
      .describe(
        'GPU index or indices the server uses (CUDA_VISIBLE_DEVICES), e.g. [0,1,2,3]: keeps servers and training on one node apart.',
      ),
    port: z.int().min(1).max(65535).optional(),
    tensorParallel: z.int().min(1).optional(),
    gpuMemoryUtilization: z.number().gt(0).max(1).optional(),
    args: z.array(z.string()).optional().describe('Extra launcher arguments.'),
    judge: z.string().optional().describe('Or: use this judge from medrl.yaml instead of starting a server.'),
  })
  .describe('A server the run needs; its URL reaches the run as MEDRL_<NAME>_URL (and MEDRL_<NAME>_MODEL, MEDRL_<NAME>_API_KEY).');

/** A Slurm partition or account: written into #SBATCH lines, so only the characters Slurm names use. */
const slurmWord = z.string().regex(/^[A-Za-z0-9_.,:@+-]+$/, 'letters, digits and _ . , : @ + -');

export const runSpecSchema = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().min(1).max(200).describe('Run name; the run id is derived from it.'),
    description: z.string().optional(),
    framework: z.enum(['verl', 'trl']),
    algorithm: z.enum(['grpo', 'ppo', 'sft', 'dpo']),
    host: z.string().min(1).optional().describe('Host from medrl.yaml; default: defaults.host.'),
    scheduler: schedulerSchema.optional(),
    workdir: z.string().optional().describe('Directory the job starts in on the host.'),
    setup: z.array(z.string()).optional().describe('Shell lines before the trainer (conda/venv activation).'),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    model: z.string().min(1).describe('Base model: a path on the host or a hub id.'),
    data: z.strictObject({
      train: z.union([z.string(), z.array(z.string())]),
      val: z.union([z.string(), z.array(z.string())]).optional(),
    }),
    reward: rewardSchema.optional(),
    lora: z
      .strictObject({
        rank: z.int().min(1),
        alpha: z.number().positive().optional(),
        targetModules: z.union([z.string(), z.array(z.string())]).optional(),
      })
      .optional(),
    rollout: z
      .strictObject({
        engine: z.enum(['vllm', 'sglang', 'hf']).default('vllm'),
        n: z.int().min(1).optional().describe('GRPO group size (responses per prompt).'),
        agentLoop: z
          .strictObject({
            path: z
              .string()
              .min(1)
              .describe('The Python file of the agent loop, in the workspace (uploaded with the run, with its imports).'),
            class: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a Python class name')
              .describe('Its class, a subclass of verl.experimental.agent_loop.AgentLoopBase.'),
          })
          .optional()
          .describe(
            "verl 0.7+: the rollout runs this agent loop for every prompt (actor_rollout_ref.rollout.agent), e.g. configs/agents/exam_simulator_loop.py's ExamSimulatorAgentLoop, DiagAgent's examination dialogue.",
          ),
      })
      .optional(),
    entry: z
      .strictObject({
        script: z.string().min(1).describe('Custom training script run with accelerate launch (TRL).'),
        accelerateConfig: z.string().optional().describe('accelerate launch --config_file (e.g. a DeepSpeed ZeRO-3 config).'),
        args: z.array(z.string()).optional().describe("The script's own arguments; the spec's overrides follow them as --key value."),
      })
      .optional()
      .describe(
        "Your own TRL script: `accelerate launch [--config_file F] --num_processes N script.py ARGS`. Nothing else is added to its command line; it gets the run from the environment: MEDRL_MODEL, MEDRL_TRAIN_FILES (paths joined by :), MEDRL_OUTPUT_DIR (the run folder's output/, where checkpoints are found), MEDRL_REWARD_MODEL or MEDRL_REWARD_FUNCTION (module.function, importable: its folder is on PYTHONPATH).",
      ),
    resources: z
      .strictObject({
        nodes: z.int().min(1).default(1),
        gpusPerNode: z.int().min(0).default(1),
        partition: slurmWord.optional(),
        time: z
          .string()
          .regex(/^(\d+-)?\d{1,2}(:\d{2}){0,2}$/, 'Slurm time: MM, HH:MM:SS or D-HH:MM:SS')
          .optional(),
        account: slurmWord.optional(),
        cpusPerTask: z.int().min(1).optional(),
        memory: z
          .string()
          .regex(/^\d+[KMGT]?$/, 'Slurm memory: a number with an optional K, M, G or T')
          .optional(),
      })
      .optional(),
    services: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'service names are letters, digits and _'), serviceSchema).optional(),
    wandb: z
      .strictObject({
        project: z.string().min(1).describe('W&B project (verl trainer.project_name; TRL WANDB_PROJECT).'),
        entity: z.string().min(1).optional().describe('W&B team or user (WANDB_ENTITY).'),
      })
      .optional()
      .describe('Also log to Weights & Biases (the key comes from SecretStorage or WANDB_API_KEY, never a file or argv).'),
    verl: z
      .strictObject({
        noCheckpoints: z
          .boolean()
          .optional()
          .describe('Train without ever saving a checkpoint (no trainer.save_freq > 0): otherwise refused before submit.'),
        forkSimulatorPatched: z
          .boolean()
          .optional()
          .describe(
            "The host's DiagAgent verl fork is patched so its rollout's call_openai_diaggym reads MEDRL_EXAM_SIMULATOR_URL (as shipped it calls two fixed IP addresses).",
          ),
      })
      .optional()
      .describe('What a verl spec means where verl would quietly do less than asked.'),
    overrides: z
      .record(z.string().min(1), overrideValue)
      .optional()
      .describe('Trainer keys passed through untouched (verl Hydra keys, TRL flags).'),
  })
  .superRefine((s, ctx) => {
    if (s.algorithm === 'dpo' && s.framework !== 'trl')
      ctx.addIssue({ code: 'custom', path: ['algorithm'], message: 'dpo runs with TRL (framework: trl)' });
    if ((s.algorithm === 'grpo' || s.algorithm === 'ppo') && !s.reward)
      ctx.addIssue({
        code: 'custom',
        path: ['reward'],
        message: `${s.algorithm} needs a reward: a function (path, function) or a reward model (model)`,
      });
    if (s.entry && s.framework !== 'trl')
      ctx.addIssue({ code: 'custom', path: ['entry'], message: 'entry (custom accelerate script) is for TRL runs' });
    if (s.framework === 'trl' && s.algorithm === 'ppo' && !s.entry)
      ctx.addIssue({
        code: 'custom',
        path: ['algorithm'],
        message: 'TRL PPO has no trl subcommand (it is trl.experimental.ppo): add entry.script, a script run with accelerate launch',
      });
    if (s.framework === 'trl' && s.data.val !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['data', 'val'],
        message: "TRL evaluates on the dataset's test split (overrides: dataset_test_split); data.val is for verl",
      });
    if (s.scheduler === 'ray' && s.framework !== 'verl')
      ctx.addIssue({ code: 'custom', path: ['scheduler'], message: 'the ray scheduler runs verl jobs' });
  });

export type RunSpec = z.output<typeof runSpecSchema>;
