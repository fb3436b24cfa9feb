import type { RunInfo } from './list-runs';

/** How long a run has been going (or went): from created to its end, or to now while it is active. */
export function elapsedMs(run: RunInfo, now: number = Date.now()): number {
  const start = Date.parse(run.record.created);
  const end = run.ended ? Date.parse(run.ended) : run.state === 'running' || run.state === 'queued' ? now : NaN;
  return Number.isFinite(end) ? Math.max(0, end - start) : NaN;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ${String(m % 60).padStart(2, '0')}m` : `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** The state as a user reads it: `failed (exit 3)`, `failed (Slurm TIMEOUT)`, `lost`. */
export function stateLabel(run: RunInfo): string {
  if (run.state === 'failed')
    return run.exitCode !== undefined ? `failed (exit ${run.exitCode})` : `failed (${run.reason ?? 'no exit code'})`;
  return run.state;
}

export function stepLabel(run: RunInfo): string {
  const p = run.progress;
  if (p.step === undefined) return '';
  const step = p.totalSteps !== undefined ? `step ${p.step}/${p.totalSteps}` : `step ${p.step}`;
  return [step, ...p.metrics.map((m) => `${m.title.toLowerCase()} ${m.value.toPrecision(3)}`)].join(' · ');
}
