import type { RunInfo } from './list-runs';
import { elapsedMs, formatDuration, stateLabel, stepLabel } from './run-summary';

/** A run as a quick pick shows it: its name, `state · host`, and its step and time when known. */
export interface RunPickItem {
  label: string;
  description: string;
  detail?: string;
  run: RunInfo;
}

/** A training run (not a service or a merge job): what has metrics, episodes and rollouts to open. */
export function isTrainingRun(run: RunInfo): boolean {
  return run.record.kind === 'train';
}

/** The runs newest first (by when they were submitted), each labelled for a quick pick. */
export function runPickItems(runs: readonly RunInfo[], now: number = Date.now()): RunPickItem[] {
  return [...runs]
    .sort((a, b) => createdMs(b) - createdMs(a) || b.record.id.localeCompare(a.record.id))
    .map((run) => {
      const detail = [stepLabel(run), formatDuration(elapsedMs(run, now))].filter(Boolean).join(' · ');
      return { label: run.record.name, description: `${stateLabel(run)} · ${run.host}`, ...(detail ? { detail } : {}), run };
    });
}

/** A record whose `created` cannot be read sorts last. */
function createdMs(run: RunInfo): number {
  const t = Date.parse(run.record.created);
  return Number.isFinite(t) ? t : -Infinity;
}
