import { posix } from 'node:path';
import type { Host } from '../remote/host';
import type { Checkpoint } from '../checkpoints/checkpoint';
import { findCheckpoint } from '../checkpoints/list-checkpoints';

/** A service name (letters, digits, _) from any label: "grpo-demo step 40" → "grpo_demo_step_40". */
export function serviceNameOf(label: string): string {
  const n = label.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return /^[A-Za-z]/.test(n) ? n : `m_${n}`;
}

/** What serving a checkpoint loads: its HuggingFace folder, or a clear error saying to merge first. */
export function servableModel(ck: Checkpoint): string {
  if (ck.servable) return ck.servable;
  if (ck.mergeable)
    throw new Error(
      `${ck.host}:${ck.path} holds ${ck.kind === 'verl-megatron' ? 'Megatron' : 'FSDP'} shards that vLLM cannot load: merge it to HuggingFace first (MedRL: Merge to HuggingFace, or medrl merge)`,
    );
  throw new Error(
    `${ck.host}:${ck.path} is a LoRA adapter without base weights: serve the base model with --enable-lora --lora-modules instead`,
  );
}

export function checkpointServiceName(ck: Checkpoint): string {
  return serviceNameOf(`${ck.run?.name ?? posix.basename(ck.root)}_step${ck.step}`);
}

/**
 * What `serve TARGET` loads: a run id or a checkpoint/run folder path resolves to the checkpoint's HuggingFace folder
 * (latest step unless `step`); anything else is a model id or model folder, served as is.
 */
export async function resolveServeTarget(
  host: Host,
  runsDir: string,
  target: string,
  step?: number,
): Promise<{ model: string; name: string; checkpoint?: Checkpoint }> {
  const isPath = target.startsWith('/') || target.startsWith('~');
  const maybeRun = !target.includes('/');
  if (isPath || maybeRun) {
    let ck: Checkpoint | undefined;
    try {
      ck = await findCheckpoint(host, runsDir, target, step);
    } catch (err) {
      if (step !== undefined || !/no run "|no checkpoints|no such folder/.test((err as Error).message)) throw err;
    }
    if (ck) return { model: servableModel(ck), name: checkpointServiceName(ck), checkpoint: ck };
  }
  return { model: target, name: serviceNameOf(posix.basename(target)) };
}
