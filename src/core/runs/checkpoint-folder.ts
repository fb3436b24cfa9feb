/** Checkpoint folder names as the trainers write them: verl's `global_step_N`, TRL's `checkpoint-N`. */

const VERL_STEP = /^global_step_(\d+)$/;
const TRL_STEP = /^checkpoint-(\d+)$/;

/** The step a checkpoint folder name stands for, and its framework; undefined for any other name. */
export function stepOfFolder(name: string): { framework: 'verl' | 'trl'; step: number } | undefined {
  const v = VERL_STEP.exec(name);
  if (v) return { framework: 'verl', step: Number(v[1]) };
  const t = TRL_STEP.exec(name);
  if (t) return { framework: 'trl', step: Number(t[1]) };
  return undefined;
}
