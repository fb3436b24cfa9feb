import { z } from 'zod';

/** The run a checkpoint belongs to, as the run folder's run.json says (run folder contract). */
export interface RunRef {
  host: string;
  dir: string;
  framework?: 'verl' | 'trl';
  id?: string;
  name?: string;
}

/**
 * verl FSDP (`actor/model_world_size_W_rank_r.pt`), verl Megatron (`actor/dist_ckpt/`), TRL full weights or TRL LoRA adapter.
 * `verl-hf` is a verl step that holds only `actor/huggingface/` (save_contents: hf_model).
 */
export type CheckpointKind = 'verl-fsdp' | 'verl-megatron' | 'verl-hf' | 'trl-full' | 'trl-lora';

/** One saved training step on a host: verl `global_step_N/` or TRL `checkpoint-N/`. */
export interface Checkpoint {
  host: string;
  /** Absolute folder on the host. */
  path: string;
  /** The folder that holds the steps (verl `default_local_dir`, TRL `output_dir`). */
  root: string;
  framework: 'verl' | 'trl';
  step: number;
  sizeBytes: number;
  /** Newest file in the checkpoint. */
  mtimeMs: number;
  /** By the host's clock, so a skewed laptop clock does not matter. */
  ageMs: number;
  /** verl: latest_checkpointed_iteration.txt names it; TRL: the highest step (what resume_from_checkpoint=True picks). */
  latest: boolean;
  kind: CheckpointKind;
  /** What it holds: actor, critic, huggingface, hf-weights, lora_adapter, dist_ckpt, trainer_state, optimizer. */
  parts: string[];
  /** A folder vLLM/SGLang load as is (TRL full weights, verl actor/huggingface with weights); undefined until merged. */
  servable?: string;
  /** The folder `verl.model_merger --local_dir` takes (verl: actor/). */
  mergeable?: string;
  run?: RunRef;
  /** The run's headline metrics at this step (e.g. critic/score/mean), when known. */
  metrics?: Record<string, number>;
}

/** run.json of a run folder; extra keys are kept, unknown values never fail discovery. */
export const runJsonSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string().optional(),
  kind: z.enum(['train', 'service', 'merge']).optional(),
  framework: z.enum(['verl', 'trl']).optional(),
  algorithm: z.string().optional(),
  host: z.string().optional(),
  scheduler: z.string().optional(),
  created: z.string().optional(),
  dir: z.string().optional(),
  pid: z.number().optional(),
  pgid: z.number().optional(),
  jobId: z.string().optional(),
  service: z.looseObject({ port: z.number(), model: z.string(), servedModelName: z.string().optional() }).optional(),
});
export type RunJson = z.output<typeof runJsonSchema>;
