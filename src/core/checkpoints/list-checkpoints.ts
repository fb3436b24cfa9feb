import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { byStepDesc, discoverCheckpoints, type DiscoverTargets, type Discovery } from './discover-checkpoints';
import { attachMetrics } from './headline-metrics';
import type { Checkpoint } from './checkpoint';

/**
 * Discovers a host's checkpoints (one round trip), newest step first, with each run's metrics at each step (unless
 * `metrics: false`: a merge, download or server needs only the folder).
 */
export async function listCheckpoints(
  host: Host,
  targets: DiscoverTargets,
  opts: { signal?: AbortSignal; metrics?: boolean } = {},
): Promise<Discovery> {
  const d = await discoverCheckpoints(host, targets, opts);
  for (const r of d.runs) r.checkpoints.sort(byStepDesc);
  d.loose.sort(byStepDesc);
  if (opts.metrics !== false) await attachMetrics(host, d.runs);
  return d;
}

/**
 * Finds one checkpoint: REF is a run id (a folder under runsDir), a run folder, a checkpoint root or a checkpoint folder
 * path; `step` picks one (default: the latest).
 */
export async function findCheckpoint(host: Host, runsDir: string, ref: string, step?: number): Promise<Checkpoint> {
  const isPath = ref.includes('/') || ref.startsWith('~');
  const path = isPath ? ref : posix.join(runsDir, ref);
  const d = await listCheckpoints(host, { paths: [path] }, { metrics: false });
  if (d.missing.length) throw new Error(`${host.name}: ${isPath ? `no such folder: ${ref}` : `no run "${ref}" in ${runsDir}`}`);
  const all = [...d.runs.flatMap((r) => r.checkpoints), ...d.loose];
  if (!all.length) throw new Error(`${host.name}: no checkpoints (global_step_N or checkpoint-N) in ${path}`);
  const ck = step === undefined ? (all.find((c) => c.latest) ?? all[0]) : all.find((c) => c.step === step);
  if (!ck)
    throw new Error(
      `${host.name}: no checkpoint at step ${step} in ${path} (steps: ${all
        .map((c) => c.step)
        .sort((a, b) => a - b)
        .join(', ')})`,
    );
  return ck;
}
