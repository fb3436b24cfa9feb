import { posix } from 'node:path';
import { RUN_FILES } from './run-record';
import { asList, hostPath, modelPath } from './host-paths';
import { versionAtLeast, type LaunchInputs, type OverrideValue, type Trainer, type TrainerCommand } from './trainer';
import type { RunSpec } from './run-spec';
import type { Problem } from '../errors/located-error';
import { keyOnRelease, releaseName, verlRelease } from './verl-versions';

/** A value as Hydra's override grammar reads it; strings from the spec's overrides pass through untouched. */
export function hydraValue(v: OverrideValue): string {
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? hydraString(x) : hydraValue(x))).join(',')}]`;
  if (v === null) return 'null';
  return String(v);
}

/** A string we generate (a path, a name) quoted for Hydra when it has characters its grammar treats specially. */
function hydraString(s: string): string {
  return /^[A-Za-z0-9_./~+@:-]+$/.test(s) ? s : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function files(list: string[]): string {
  return list.length === 1 ? hydraString(list[0]!) : `[${list.map(hydraString).join(',')}]`;
}

/** verl's `file` logger backend (metrics.jsonl) exists from 0.6.0 (verl/utils/tracking.py FileLogger, added 2025-09-06). */
const FILE_LOGGER_SINCE = [0, 6, 0];

/**
 * Defaults of verl's ppo_trainer.yaml that the batch rules use (the same from 0.4 to main): data.train_batch_size 1024,
 * actor.ppo_mini_batch_size 256, rollout.tensor_model_parallel_size 2, data.max_prompt_length and max_response_length 512,
 * actor.ppo_max_token_len_per_gpu 16384 (the per-GPU token budget our micro batches are sized to).
 */
const VERL_DEFAULTS = { trainBatch: 1024, miniBatch: 256, rolloutTp: 2, promptLength: 512, responseLength: 512, tokensPerGpu: 16384 };
/** A micro batch we fill is 1 to this many sequences per GPU. */
const MAX_FILLED_MICRO = 4;

const K = {
  trainBatch: 'data.train_batch_size',
  n: 'actor_rollout_ref.rollout.n',
  mini: 'actor_rollout_ref.actor.ppo_mini_batch_size',
  micro: 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
  microGlobal: 'actor_rollout_ref.actor.ppo_micro_batch_size',
  dynamic: 'actor_rollout_ref.actor.use_dynamic_bsz',
  sp: 'actor_rollout_ref.actor.ulysses_sequence_parallel_size',
  klLoss: 'actor_rollout_ref.actor.use_kl_loss',
  klReward: 'algorithm.use_kl_in_reward',
  tp: 'actor_rollout_ref.rollout.tensor_model_parallel_size',
  criticMini: 'critic.ppo_mini_batch_size',
  criticMicro: 'critic.ppo_micro_batch_size_per_gpu',
  criticMicroGlobal: 'critic.ppo_micro_batch_size',
  criticModel: 'critic.model.path',
} as const;

/** A log-prob micro batch key (rollout, ref) and its deprecated global twin. */
const LOG_PROB = (role: 'rollout' | 'ref') => ({
  perGpu: `actor_rollout_ref.${role}.log_prob_micro_batch_size_per_gpu`,
  global: `actor_rollout_ref.${role}.log_prob_micro_batch_size`,
});

interface BatchPlan {
  /** Keys verl needs that the spec leaves unset, with the values derived from its resources. */
  fill: [string, string][];
  /** What verl would refuse, by the key to set. */
  refused: { key: string; message: string }[];
}

/**
 * verl's batch-size rules for GRPO/PPO, applied to the spec: the micro batch sizes it leaves unset are filled (as many
 * sequences per GPU as verl's per-GPU token budget holds, 1 to 4), the mini batch is capped at the train batch, and
 * what verl would still refuse is named by the key to set. Rules, as verl checks them:
 * - verl/utils/config.py validate_config (main), RayPPOTrainer._validate_config (0.4-0.5): train_batch_size × n
 *   divisible by the GPU count; a log-prob micro batch for the rollout, and for the ref when use_kl_loss or
 *   use_kl_in_reward; never both a deprecated global micro batch and its _per_gpu twin.
 * - verl/workers/config/actor.py and critic.py (0.5+; ray_trainer in 0.4): ppo_micro_batch_size(_per_gpu) set;
 *   train_batch_size >= ppo_mini_batch_size.
 * - verl/workers/fsdp_workers.py (all): mini × n // (GPUs / ulysses SP) > 0 and divisible by the per-GPU micro
 *   batch; the GPU count divisible by the rollout's tensor_model_parallel_size.
 * With no GPU (resources.gpusPerNode 0, the stand-in's demo) the GPU-count rules are left out.
 */
function batchPlan(spec: RunSpec): BatchPlan {
  const o = spec.overrides ?? {};
  const plan: BatchPlan = { fill: [], refused: [] };
  const has = (k: string) => o[k] !== undefined && o[k] !== null;
  const refuse = (key: string, message: string) => plan.refused.push({ key, message });
  const num = (k: string, fallback: number): number | undefined => {
    if (!has(k)) return fallback;
    if (typeof o[k] === 'string' && o[k].includes('${')) return undefined; // a Hydra interpolation: only verl can resolve it
    const v = Number(o[k]);
    if (Number.isInteger(v) && v > 0) return v;
    refuse(k, `${k} is ${JSON.stringify(o[k])}: verl needs a positive whole number here`);
    return undefined;
  };
  const gpus = (spec.resources?.nodes ?? 1) * (spec.resources?.gpusPerNode ?? 1);
  const n = num(K.n, spec.rollout?.n ?? 1);
  const trainBatch = num(K.trainBatch, VERL_DEFAULTS.trainBatch);
  const sp = num(K.sp, 1);
  const tokens =
    (num('data.max_prompt_length', VERL_DEFAULTS.promptLength) ?? VERL_DEFAULTS.promptLength) +
    (num('data.max_response_length', VERL_DEFAULTS.responseLength) ?? VERL_DEFAULTS.responseLength);
  const microCap = Math.min(MAX_FILLED_MICRO, Math.max(1, Math.floor(VERL_DEFAULTS.tokensPerGpu / tokens)));
  if (n === undefined || trainBatch === undefined || sp === undefined) return plan;

  if (gpus > 0 && (trainBatch * n) % gpus !== 0) {
    refuse(
      K.trainBatch,
      `data.train_batch_size × rollout.n (${trainBatch} × ${n} = ${trainBatch * n}) must be divisible by the ${gpus} GPUs (verl: "real_train_batch_size (${trainBatch * n}) must be divisible by minimal possible batch size (${gpus})"): set overrides.${K.trainBatch} to a multiple of ${gpus / gcd(gpus, n)}`,
    );
  }
  const tp = has(K.tp) ? num(K.tp, VERL_DEFAULTS.rolloutTp) : VERL_DEFAULTS.rolloutTp;
  if (gpus > 0 && tp !== undefined && gpus % tp !== 0) {
    if (has(K.tp))
      refuse(
        K.tp,
        `the rollout's tensor_model_parallel_size ${tp} does not divide the ${gpus} GPUs (verl: "rollout world_size: ${gpus} is not divisible by infer_tp: ${tp}"): set overrides.${K.tp} to a divisor of ${gpus}`,
      );
    else plan.fill.push([K.tp, '1']); // verl's default 2 cannot split an odd GPU count
  }

  // Under use_dynamic_bsz verl sizes micro batches by tokens and skips these rules.
  if (o[K.dynamic] === true) return plan;
  const dp = Math.max(1, gpus) / sp;
  const microFor = (local: number) => [4, 3, 2, 1].find((m) => m <= microCap && local % m === 0) ?? 1;

  /** One trainer (actor or critic): its mini batch, its micro batch, and the rules on them. */
  const trainer = (role: string, keys: { mini: string; micro: string; global: string }, mini: number | undefined, fillMini: boolean) => {
    if (mini === undefined) return;
    if (fillMini) plan.fill.push([keys.mini, String(mini)]);
    if (trainBatch < mini)
      refuse(
        keys.mini,
        `${role}.ppo_mini_batch_size (${mini}) is above data.train_batch_size (${trainBatch}) (verl: "train_batch_size (${trainBatch}) must be >= ${role}.ppo_mini_batch_size (${mini})"): set overrides.${keys.mini} to at most ${trainBatch}`,
      );
    const local = Math.floor((mini * n) / dp);
    if (local === 0) {
      refuse(
        keys.mini,
        `${role}.ppo_mini_batch_size × rollout.n (${mini} × ${n}) is less than the ${dp} data-parallel GPUs, so each gets none (verl: "ppo_mini_batch_size 0 should be larger than 0 after normalization"): set overrides.${keys.mini} to at least ${Math.ceil(dp / n)}`,
      );
      return;
    }
    if (has(keys.micro) && has(keys.global))
      refuse(
        keys.global,
        `both ${keys.global} and ${keys.micro} are set; verl takes only the _per_gpu one (the other is deprecated): remove overrides.${keys.global}`,
      );
    let micro: number | undefined;
    if (has(keys.micro)) micro = num(keys.micro, 1);
    else if (has(keys.global)) {
      const global = num(keys.global, 1);
      micro = global === undefined ? undefined : Math.floor(global / dp);
      if (micro === 0)
        refuse(
          keys.global,
          `${keys.global} (${global}) is less than the ${dp} data-parallel GPUs: set overrides.${keys.micro} instead (sequences per GPU)`,
        );
    } else {
      micro = microFor(local);
      plan.fill.push([keys.micro, String(micro)]);
    }
    if (micro && local % micro !== 0) {
      refuse(
        keys.micro,
        `each GPU's share of the mini batch (${role}.ppo_mini_batch_size × rollout.n / ${dp} GPUs = ${local}) is not divisible by the micro batch ${micro} (verl: "normalized ppo_mini_batch_size ${local} should be divisible by ppo_micro_batch_size_per_gpu ${micro}"): set overrides.${keys.micro} to a divisor of ${local}`,
      );
    }
  };
  const actorMini = has(K.mini) ? num(K.mini, VERL_DEFAULTS.miniBatch) : Math.min(VERL_DEFAULTS.miniBatch, trainBatch);
  trainer('actor', { mini: K.mini, micro: K.micro, global: K.microGlobal }, actorMini, !has(K.mini));
  if (spec.algorithm === 'ppo') {
    // critic.ppo_mini_batch_size defaults to the actor's (ppo_trainer.yaml interpolation).
    trainer(
      'critic',
      { mini: K.criticMini, micro: K.criticMicro, global: K.criticMicroGlobal },
      has(K.criticMini) ? num(K.criticMini, 1) : actorMini,
      false,
    );
  }

  const logProb = (role: 'rollout' | 'ref') => {
    const keys = LOG_PROB(role);
    if (has(keys.perGpu) && has(keys.global))
      refuse(
        keys.global,
        `both ${keys.global} and ${keys.perGpu} are set; verl takes only the _per_gpu one (the other is deprecated): remove overrides.${keys.global}`,
      );
    else if (!has(keys.perGpu) && !has(keys.global)) plan.fill.push([keys.perGpu, String(microCap)]);
  };
  logProb('rollout');
  if (o[K.klLoss] === true || o[K.klReward] === true) logProb('ref');
  return plan;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** What verl refuses in the spec before it starts: the batch rules, with the key to set. */
function verlProblems(spec: RunSpec, specFile: string): Problem[] {
  const problems: Problem[] = [];
  if (spec.algorithm === 'grpo' || spec.algorithm === 'ppo') {
    const saveFreq = spec.overrides?.['trainer.save_freq'];
    // verl's fit loop saves only when trainer.save_freq > 0 (ray_trainer.py, 0.4 to main; the default is -1), not even at the end.
    if (!spec.verl?.noCheckpoints && !(typeof saveFreq === 'string' && saveFreq.includes('${')) && !(Number(saveFreq) > 0))
      problems.push({
        file: specFile,
        field: 'overrides.trainer.save_freq',
        severity: 'error',
        message: `trainer.save_freq is ${saveFreq === undefined ? "unset (verl's default -1)" : JSON.stringify(saveFreq)}: verl saves a checkpoint only when save_freq > 0, so this run would train and never write one (no LoRA adapter either, not even at the last step). Set overrides.trainer.save_freq (steps between checkpoints; the last step is always saved then), or verl.noCheckpoints: true if you mean it`,
      });
    for (const r of batchPlan(spec).refused)
      problems.push({ file: specFile, field: `overrides.${r.key}`, severity: 'error', message: r.message });
    if (
      spec.reward &&
      'model' in spec.reward &&
      spec.overrides?.['reward_model.micro_batch_size_per_gpu'] === undefined &&
      spec.overrides?.['reward_model.micro_batch_size'] === undefined
    ) {
      // 0.4-0.6 refuse a reward model without it ("[reward_model] Please set at least one of ..."); later verl moved
      // the reward model under reward.reward_model, where this key no longer exists, so it is not filled for you.
      problems.push({
        file: specFile,
        field: 'overrides.reward_model.micro_batch_size_per_gpu',
        severity: 'warning',
        message:
          'verl up to 0.6 refuses a reward model without reward_model.micro_batch_size_per_gpu: set it in overrides for those versions',
      });
    }
  }
  return problems;
}

/** The stand-in (standins/verl-*.dist-info) says so in its version's local label; it trains on no GPU. */
const STANDIN_LABEL = '+medrl.standin';

/** A boolean override as Hydra reads it (true, True, "true"). */
function isTrue(v: OverrideValue | undefined): boolean {
  return v === true || (typeof v === 'string' && /^true$/i.test(v));
}

/** The spec field a key MedRL writes comes from (an override's own key, else the part of the spec that makes it). */
function fieldOf(spec: RunSpec, key: string): string {
  if (spec.overrides?.[key] !== undefined) return `overrides.${key}`;
  if (/\.(lora_rank|lora_alpha|target_modules)$/.test(key)) return 'lora';
  if (/^(reward\.)?(custom_reward_function|reward_model)\./.test(key)) return 'reward';
  if (key === 'actor_rollout_ref.rollout.n') return 'rollout.n';
  return 'framework';
}

/** The fork's own multi-turn rollout, and what it calls: said wherever the fork is refused for it. */
const FORK_ROLLOUT =
  "the DiagAgent fork has no multi_turn config: with vLLM's SPMD engine its rollout is always vLLMRolloutWithMultiTurn (verl/workers/fsdp_workers.py), which asks the exam simulator itself";

/**
 * What the host's verl refuses, or does less than asked, for this spec (rules picked by verlRelease): keys its Hydra
 * config lacks, multi-turn without what it needs, the sync vLLM rollout's chunked-prefill limit, no GPU, and the
 * DiagAgent fork's fixed simulator addresses. test/integration/runs/verl-code.test.ts holds these to verl's own code.
 */
function verlVersionProblems(version: string, spec: RunSpec, specFile: string): Problem[] {
  if (spec.algorithm === 'sft') return [];
  const release = verlRelease(version);
  const standin = version.includes(STANDIN_LABEL);
  const o = spec.overrides ?? {};
  const problems: Problem[] = [];
  const refuse = (field: string, message: string) => problems.push({ file: specFile, field, severity: 'error', message });
  const on = `verl ${version}${release.version === version ? '' : ` (rules of ${releaseName(release)})`}`;
  const vllm = (spec.rollout?.engine ?? 'vllm') === 'vllm';

  for (const key of launchKeys(spec, version)) {
    const found = keyOnRelease(key, release);
    if (found.known) continue;
    const where = found.since ? `it exists from verl ${releaseName(found.since)}` : 'no verl release MedRL Studio knows has it';
    const fork = release.fork && key.includes('multi_turn') ? `; ${FORK_ROLLOUT}: remove overrides.${key}` : '';
    refuse(
      fieldOf(spec, key),
      `${on} has no config key ${key} (Hydra: "Could not override '${key}'"): ${where}${fork || `; this spec needs ${found.since ? `verl ${releaseName(found.since)} or newer` : 'another key'}`}`,
    );
  }

  // 0.9 and main keep the old top-level reward key in their config but main_ppo no longer moves it under reward.
  if (release.index >= verlRelease('0.9.0').index)
    for (const key of ['custom_reward_function.path', 'custom_reward_function.name'].filter((k) => o[k] !== undefined))
      refuse(
        `overrides.${key}`,
        `${on} accepts ${key} but never reads it (its main_ppo no longer moves the old reward keys under reward., as 0.8's did): use overrides.reward.${key}, or the spec's reward`,
      );

  const multiTurn = isTrue(o['actor_rollout_ref.rollout.multi_turn.enable']);
  const hasTools = [
    'actor_rollout_ref.rollout.multi_turn.tool_config_path',
    'actor_rollout_ref.rollout.multi_turn.interaction_config_path',
  ].some((k) => o[k] !== undefined && o[k] !== null);
  const mode = String(o['actor_rollout_ref.rollout.mode'] ?? (release.index >= verlRelease('0.7.0').index ? 'async' : 'sync'));
  if (multiTurn && !hasTools && release.source === 'v0.4.1')
    refuse(
      'overrides.actor_rollout_ref.rollout.multi_turn.enable',
      `${on} refuses multi-turn without a tool or interaction config (ray_trainer _validate_config: "tool_config_path or interaction_config_path must be set when enabling multi_turn with tool, due to no role-playing support"): set overrides.actor_rollout_ref.rollout.multi_turn.tool_config_path`,
    );
  // 0.4-0.6's sync vLLM rollout never reads multi_turn (only the SGLang rollout does): one turn, whatever the config.
  if (
    multiTurn &&
    !release.fork &&
    mode === 'sync' &&
    vllm &&
    !(release.source === 'v0.4.1' && !hasTools) &&
    release.index <= verlRelease('0.6.1').index
  )
    refuse(
      'overrides.actor_rollout_ref.rollout.multi_turn.enable',
      `on ${on} the sync vLLM rollout never reads multi_turn (vllm_rollout_spmd.py; only the SGLang rollout does): the run would train single-turn. Use rollout.engine: sglang, or set overrides.actor_rollout_ref.rollout.mode: async with a tool config`,
    );
  const agentLoop = o['actor_rollout_ref.rollout.agent.default_agent_loop'];
  const agentConfig = o['actor_rollout_ref.rollout.agent.agent_loop_config_path'] ?? spec.rollout?.agentLoop;
  if (multiTurn && !hasTools && mode === 'async' && (agentLoop === undefined || agentLoop === 'single_turn_agent') && !agentConfig)
    refuse(
      'overrides.actor_rollout_ref.rollout.multi_turn.enable',
      `on ${on} multi_turn.enable with no tool, interaction or agent loop config trains single-turn (the agent loop is single_turn_agent): the policy would never call a tool or service. Set rollout.agentLoop (DiagAgent's examination dialogue: configs/agents/exam_simulator_loop.py), or overrides.actor_rollout_ref.rollout.multi_turn.tool_config_path (or interaction_config_path)`,
    );

  // Agent loops as MedRL ships and tests them (configs/agents/, test/integration/runs/agent-loop.test.ts) use the
  // AgentLoopBase of 0.7 to main; 0.5-0.6 build loops with other arguments, and only in async mode.
  if (spec.rollout?.agentLoop && release.index < verlRelease('0.7.0').index)
    refuse(
      'rollout.agentLoop',
      `${on} cannot run rollout.agentLoop: agent loops are written for verl's AgentLoopBase of 0.7 to main (the loop every prompt runs, actor_rollout_ref.rollout.agent.default_agent_loop). Run the spec on verl 0.7 or newer${release.fork ? `; ${FORK_ROLLOUT}` : ''}`,
    );

  // The sync vLLM rollout (the fork, 0.4-0.6) raises when a whole sequence does not fit one prefill chunk
  // (vLLMRollout.__init__ in vllm_rollout_spmd.py); max_num_batched_tokens defaults to 10192 on the fork, 8192 upstream.
  if (vllm && mode === 'sync' && release.index <= verlRelease('0.6.1').index) {
    const num = (k: string, d: number) => (o[k] === undefined || o[k] === null ? d : Number(o[k]));
    const batched = num('actor_rollout_ref.rollout.max_num_batched_tokens', release.fork ? 10192 : 8192);
    const lengths =
      num('data.max_prompt_length', VERL_DEFAULTS.promptLength) + num('data.max_response_length', VERL_DEFAULTS.responseLength);
    const modelLen = num('actor_rollout_ref.rollout.max_model_len', 0) || lengths;
    const chunked =
      o['actor_rollout_ref.rollout.enable_chunked_prefill'] === undefined || isTrue(o['actor_rollout_ref.rollout.enable_chunked_prefill']);
    if (chunked && batched < modelLen)
      refuse(
        'overrides.actor_rollout_ref.rollout.max_num_batched_tokens',
        `${on}'s vLLM rollout refuses a sequence longer than one prefill chunk: max_model_len ${modelLen} (max_prompt_length + max_response_length) is above max_num_batched_tokens ${batched} with chunked prefill on ("Enable chunked prefill, max_num_batched_tokens is smaller than max_model_len"): set overrides.actor_rollout_ref.rollout.max_num_batched_tokens to at least ${modelLen}`,
      );
  }

  const gpus = (spec.resources?.nodes ?? 1) * (spec.resources?.gpusPerNode ?? 1);
  if (gpus === 0 && !standin)
    refuse(
      'resources.gpusPerNode',
      `${on} needs GPUs: with trainer.n_gpus_per_node 0 its config check divides by the GPU count ("integer division or modulo by zero"). Only MedRL Studio's stand-in trains without one`,
    );

  if (release.fork && vllm && !spec.verl?.forkSimulatorPatched)
    refuse(
      'framework',
      `${on}: ${FORK_ROLLOUT}, at two fixed IP addresses (call_openai_diaggym in verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py), and turns a failed call into the text "None". MEDRL_EXAM_SIMULATOR_URL is never read. Patch call_openai_diaggym to use base_url=os.environ["MEDRL_EXAM_SIMULATOR_URL"] + "/v1" and to raise when the call fails, then set verl.forkSimulatorPatched: true in the spec; or run the spec on verl 0.7 or newer with rollout.agentLoop: configs/agents/exam_simulator_loop.py (ExamSimulatorAgentLoop), which asks MEDRL_EXAM_SIMULATOR_URL`,
    );
  return problems;
}

/** The keys of the spec's launch line on a verl version (a `+key` adds a key, which Hydra allows anywhere). */
function launchKeys(spec: RunSpec, version: string): string[] {
  const dirs = { home: '/home/u', workdir: '/home/u' };
  const cmd = buildVerlCommand({
    spec,
    id: 'check',
    dir: '/home/u/run',
    dirs,
    rewardFile: '/home/u/run/reward/r.py',
    agentLoopFile: '/home/u/run/agent/a.py',
    version,
  });
  return cmd.argv
    .filter((a) => a.includes('=') && !a.startsWith('-'))
    .map((a) => a.slice(0, a.indexOf('=')))
    .filter((k) => !k.startsWith('+') && !k.startsWith('~'));
}

/**
 * verl: `python3 -m verl.trainer.main_ppo` with Hydra overrides (GRPO/PPO), or `torchrun -m verl.trainer.fsdp_sft_trainer` (SFT).
 * Trainer outputs go into the run folder (rollouts/, validation/, checkpoints/, and metrics.jsonl through the `file` logger
 * on verl 0.6+) so metrics, replay and checkpoints find them; the batch keys verl requires are filled from the spec's
 * resources; the spec's own `overrides` come last and win.
 */
function buildVerlCommand(inp: LaunchInputs): TrainerCommand {
  const { spec, dir, dirs } = inp;
  const res = { nodes: spec.resources?.nodes ?? 1, gpus: spec.resources?.gpusPerNode ?? 1 };
  const train = asList(spec.data.train).map((p) => hostPath(p, dirs));
  const val = asList(spec.data.val).map((p) => hostPath(p, dirs));
  const keys = new Map<string, string>();
  const set = (k: string, v: string) => keys.set(k, v);
  const env = trainerEnv(inp);

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

  const model = hydraString(modelPath(spec.model, dirs));
  set('algorithm.adv_estimator', spec.algorithm === 'grpo' ? 'grpo' : 'gae');
  set('data.train_files', files(train));
  if (val.length) set('data.val_files', files(val));
  set('actor_rollout_ref.model.path', model);
  set('actor_rollout_ref.rollout.name', spec.rollout?.engine ?? 'vllm');
  if (spec.rollout?.n !== undefined) set(K.n, String(spec.rollout.n));
  if (spec.lora) {
    set('actor_rollout_ref.model.lora_rank', String(spec.lora.rank));
    if (spec.lora.alpha !== undefined) set('actor_rollout_ref.model.lora_alpha', String(spec.lora.alpha));
    if (spec.lora.targetModules !== undefined) set('actor_rollout_ref.model.target_modules', hydraValue(spec.lora.targetModules));
  }
  // PPO's critic: verl's default critic.model.path is ~/models/deepseek-llm-7b-chat (ppo_trainer.yaml); start from the actor's.
  if (spec.algorithm === 'ppo') set(K.criticModel, model);
  // 0.8 moved the reward under reward.* and migrated the old keys in main_ppo; 0.9 and main accept the old keys but
  // never read them (verl_code_check.py's as_main_ppo_sees_it): the new keys from 0.8 on, the old ones before.
  const reward = inp.version !== undefined && verlRelease(inp.version).index >= verlRelease('0.8.0').index ? 'reward.' : '';
  if (spec.reward && 'path' in spec.reward) {
    if (!inp.rewardFile) throw new Error('internal: the reward file was not uploaded before the command was built');
    set(`${reward}custom_reward_function.path`, hydraString(inp.rewardFile));
    set(`${reward}custom_reward_function.name`, spec.reward.function);
  } else if (spec.reward) {
    set(reward ? 'reward.reward_model.enable' : 'reward_model.enable', 'True');
    set(reward ? 'reward.reward_model.model_path' : 'reward_model.model.path', hydraString(modelPath(spec.reward.model, dirs)));
  }
  const agent = agentLoopLaunch(inp);
  if (agent) for (const [k, v] of Object.entries(agent.keys)) set(k, v);
  for (const [k, v] of batchPlan(spec).fill) set(k, v);
  setTrainer(set, inp, res);
  set('trainer.rollout_data_dir', hydraString(posix.join(dir, RUN_FILES.rollouts)));
  set('trainer.validation_data_dir', hydraString(posix.join(dir, RUN_FILES.validation)));
  for (const [k, v] of Object.entries(spec.overrides ?? {})) set(k, hydraValue(v));
  // verl loads the reward file by its path (get_custom_reward_fn in verl/trainer/ppo/reward.py, 0.4 to main:
  // importlib spec_from_file_location), which puts no folder on sys.path: the files it
  // imports from beside it are found through PYTHONPATH.
  // The agent loop's module is found the same way, on every Ray worker (they inherit the driver's environment).
  const folders = [inp.rewardFile, agent ? inp.agentLoopFile : undefined].filter((f) => f !== undefined).map((f) => posix.dirname(f));
  const pythonPath = folders.length ? [...new Set(folders)].join(':') : undefined;
  const argv = ['python3', '-m', 'verl.trainer.main_ppo', ...[...keys].map(([k, v]) => `${k}=${v}`)];
  return { argv, env, pythonPath, ...(agent ? { files: agent.files } : {}) };
}

/** The name the spec's agent loop is registered under in the agent loop config MedRL writes. */
export const AGENT_LOOP_NAME = 'medrl_agent_loop';

/**
 * The spec's rollout.agentLoop as verl reads it (AgentLoopWorker, 0.7 to main): a YAML list of {name, _target_} at
 * actor_rollout_ref.rollout.agent.agent_loop_config_path, built with hydra.utils.instantiate, and the loop every prompt
 * runs at agent.default_agent_loop. _target_ is module.Class: the module's folder is on PYTHONPATH.
 */
function agentLoopLaunch(inp: LaunchInputs): { keys: Record<string, string>; files: Record<string, string> } | undefined {
  const loop = inp.spec.rollout?.agentLoop;
  if (!loop) return undefined;
  if (!inp.agentLoopFile) throw new Error('internal: the agent loop file was not uploaded before the command was built');
  const module = posix.basename(inp.agentLoopFile, '.py');
  const config = posix.join(posix.dirname(inp.agentLoopFile), 'agent_loops.yaml');
  return {
    keys: {
      'actor_rollout_ref.rollout.agent.agent_loop_config_path': hydraString(config),
      'actor_rollout_ref.rollout.agent.default_agent_loop': AGENT_LOOP_NAME,
    },
    files: {
      [posix.join(RUN_FILES.agentLoop, 'agent_loops.yaml')]: `- name: ${AGENT_LOOP_NAME}\n  _target_: ${module}.${loop.class}\n`,
    },
  };
}

/** The file logger only where the host's verl has it (unknown version: console only, output.log is parsed instead). */
function fileLogger(inp: LaunchInputs): boolean {
  return inp.version !== undefined && versionAtLeast(inp.version, FILE_LOGGER_SINCE);
}

function trainerEnv(inp: LaunchInputs): Record<string, string> {
  const env: Record<string, string> = {};
  if (fileLogger(inp)) env.VERL_FILE_LOGGER_PATH = posix.join(inp.dir, RUN_FILES.metrics);
  // verl main passes WANDB_ENTITY to wandb.init (tracking.py); older verl leaves it to wandb, which reads the same variable.
  if (inp.spec.wandb?.entity) env.WANDB_ENTITY = inp.spec.wandb.entity;
  return env;
}

function setTrainer(set: (k: string, v: string) => void, inp: LaunchInputs, res: { nodes: number; gpus: number }): void {
  set('trainer.project_name', hydraString(inp.spec.wandb?.project ?? 'medrl'));
  set('trainer.experiment_name', inp.id);
  set('trainer.nnodes', String(res.nodes));
  set('trainer.n_gpus_per_node', String(res.gpus));
  // console for output.log, file for metrics.jsonl (verl 0.6+): both are what the metrics view reads. Below 0.6 the
  // `file` backend does not exist (tracking.py asserts "file is not supported").
  const loggers = ['console', ...(fileLogger(inp) ? ['file'] : []), ...(inp.spec.wandb ? ['wandb'] : [])];
  set('trainer.logger', `[${loggers.map((l) => `'${l}'`).join(',')}]`);
  set('trainer.default_local_dir', hydraString(posix.join(inp.dir, RUN_FILES.checkpoints)));
}

/** verl (volcengine/verl): Hydra overrides on `verl.trainer.main_ppo` / `fsdp_sft_trainer`. */
export const verlTrainer: Trainer = {
  framework: 'verl',
  distribution: 'verl',
  command: buildVerlCommand,
  problems: verlProblems,
  // verl's trainer reads both (trainer.resume_mode=resume_path, trainer.resume_from_path=<global_step_N>).
  resumeOverrides: (checkpointPath) => ({ 'trainer.resume_mode': 'resume_path', 'trainer.resume_from_path': checkpointPath }),
  versionProblems: verlVersionProblems,
  installCheck: () => ({ test: "python3 -c 'import verl'", what: 'verl (python3 -c "import verl")' }),
  // PPO/GRPO drive a Ray cluster (verl's examples/slurm/ray_on_slurm.slurm); SFT is torchrun --nnodes.
  multiNode: (spec) => (spec.algorithm === 'sft' ? 'torchrun' : 'ray'),
};
