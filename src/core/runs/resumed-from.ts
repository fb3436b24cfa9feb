import { posix } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { stepOfFolder } from './checkpoint-folder';
import type { RunSpec } from './run-spec';
import { trainerFor } from './trainers';
import { hostPath, type HostDirs } from './host-paths';
import { RUN_FILES } from './run-record';
import type { ResumedFrom } from './provenance';

/** Stands for the checkpoint path in the trainer's resume overrides, to find which key holds it. */
const PATH = '\0checkpoint';

/**
 * The checkpoint a spec resumes from: the path its trainer's resume overrides hold (`resumeOverrides`, as "Resume from
 * Checkpoint" writes them), when every one of them is set; undefined for a spec that starts fresh (TRL's
 * `resume_from_checkpoint: true` names no folder). The run is the one whose folder holds the checkpoint
 * (`<run>/checkpoints/global_step_N`, `<run>/output/checkpoint-N`): run folders are named by their run's id.
 */
export function resumedFrom(spec: RunSpec, dirs: HostDirs): ResumedFrom | undefined {
  const overrides = spec.overrides ?? {};
  let path: string | undefined;
  for (const [key, value] of Object.entries(trainerFor(spec.framework).resumeOverrides(PATH))) {
    const set = overrides[key];
    if (value !== PATH) {
      if (!isDeepStrictEqual(set, value)) return undefined;
    } else if (typeof set === 'string' && set) path = set;
    else return undefined;
  }
  if (path === undefined) return undefined;
  const checkpoint = hostPath(path, dirs).replace(/\/+$/, '');
  const parent = posix.dirname(checkpoint);
  const stepFolders: string[] = [RUN_FILES.checkpoints, RUN_FILES.trlOutput];
  const inRun = stepFolders.includes(posix.basename(parent));
  const runDir = posix.dirname(parent);
  return {
    checkpoint,
    step: stepOfFolder(posix.basename(checkpoint))?.step ?? null,
    run: inRun ? { id: posix.basename(runDir), dir: runDir } : null,
  };
}
