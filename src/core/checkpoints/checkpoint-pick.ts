import { posix } from 'node:path';
import type { Checkpoint } from './checkpoint';
import { formatAge } from '../format/age';
import { formatBytes } from '../format/bytes';

/** A checkpoint as a quick pick shows it: `run step-N`, `host · step · size · age`. */
export interface CheckpointPickItem<T> {
  label: string;
  description: string;
  value: T;
}

export function checkpointName(ck: Checkpoint): string {
  return `${ck.run?.name ?? posix.basename(ck.root)} ${posix.basename(ck.path)}`;
}

/** Checkpoints newest first (by their newest file), each labelled for a quick pick; `of` finds each one's checkpoint. */
export function checkpointPickItems<T>(values: readonly T[], of: (v: T) => Checkpoint): CheckpointPickItem<T>[] {
  return [...values]
    .sort((a, b) => of(b).mtimeMs - of(a).mtimeMs)
    .map((value) => {
      const ck = of(value);
      const description = [ck.host, `step ${ck.step}`, formatBytes(ck.sizeBytes), `${formatAge(ck.ageMs)} ago`, ck.latest ? 'latest' : '']
        .filter(Boolean)
        .join(' · ');
      return { label: checkpointName(ck), description, value };
    });
}
