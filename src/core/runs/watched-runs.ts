import type { Host } from '../remote/host';
import { stripAnsi } from '../format/terminal-text';
import { headline, HEADLINES, primaryHeadlines } from '../metrics/headline';
import { RunMetrics } from '../metrics/run-metrics';
import type { MetricsCache } from '../metrics/metrics-cache';
import type { RunInfo } from './list-runs';
import { isActive } from './run-record';
import { stateLabel, stepLabel } from './run-summary';

/**
 * A run submitted from a window, waiting to be announced when it ends. Only its host and id are kept across reloads
 * (never its spec or log: they may hold medical text).
 */
export interface WatchedRun {
  host: string;
  id: string;
  /** When it was watched (ms since the epoch); 0 for one read back after a reload. */
  since: number;
}

/** A run the user is told about: it ended, or its host lists it no more. */
export type Announcement = { kind: 'ended'; run: RunInfo } | { kind: 'gone'; watched: WatchedRun };

/** One host of a listing (the runs tree's): its runs, or why it could not be asked. */
export interface ListedHost {
  host: { name: string };
  runs: RunInfo[];
  error?: string;
}

/**
 * Which watched runs to announce after a listing that began at `listedAt`, and which keep waiting. Each run is
 * announced once: the caller drops the announced ones from what it keeps.
 * - ended on its host: announced;
 * - queued or running, or its host could not be asked: waits (an unreachable host's runs are unknown, not gone);
 * - its host is not in the listing (medrl.yaml not loaded yet, the workspace untrusted, or the host renamed): waits,
 *   since nothing can be known about it, and asks for no refresh;
 * - missing from a listing of its host that began after it was watched: announced as gone (its folder was deleted, or
 *   runsDir changed), since nothing would ever end the wait. A listing that began earlier (in flight during the
 *   submit) cannot have seen it, so it waits.
 * `retry`: some run waits on a host that was listed, so the listing should be asked again even if no run is active.
 */
export function runsToAnnounce(
  watched: readonly WatchedRun[],
  hosts: readonly ListedHost[],
  listedAt: number,
): { announce: Announcement[]; waiting: WatchedRun[]; retry: boolean } {
  const announce: Announcement[] = [];
  const waiting: WatchedRun[] = [];
  let retry = false;
  for (const w of watched) {
    const listed = hosts.find((h) => h.host.name === w.host);
    if (!listed) {
      waiting.push(w);
      continue;
    }
    const run = listed.error ? undefined : listed.runs.find((r) => r.record.id === w.id);
    if (run && !isActive(run.state)) announce.push({ kind: 'ended', run });
    else if (!run && !listed.error && listedAt >= w.since) announce.push({ kind: 'gone', watched: w });
    else {
      waiting.push(w);
      retry = true;
    }
  }
  return { announce, waiting, retry };
}

/** The watched runs as kept in workspace state, read back; anything not a `{ host, id }` is dropped. */
export function parseWatched(stored: unknown): WatchedRun[] {
  if (!Array.isArray(stored)) return [];
  return stored
    .filter((x): x is { host: string; id: string } => typeof x?.host === 'string' && typeof x?.id === 'string')
    .map(({ host, id }) => ({ host, id, since: 0 }));
}

/** What workspace state keeps of the watched runs: hosts and ids only. */
export function storedWatched(watched: readonly WatchedRun[]): Array<{ host: string; id: string }> {
  return watched.map(({ host, id }) => ({ host, id }));
}

/**
 * The status bar's summary of active runs (queued or running): `2 runs`, and one tooltip line per run. Services are
 * left out: a model server runs for days and is shown in the Services view.
 */
export function activeRunsSummary(runs: readonly RunInfo[]): { text: string; tooltip: string } | undefined {
  const active = runs.filter((r) => isActive(r.state) && r.record.kind !== 'service');
  if (!active.length) return undefined;
  return {
    text: `${active.length} run${active.length === 1 ? '' : 's'}`,
    tooltip: active.map((r) => [r.record.name, r.state, r.host, stepLabel(r)].filter(Boolean).join(' · ')).join('\n'),
  };
}

/** A headline metric's last value: `reward 0.734 at step 20`. */
export interface LastMetric {
  title: string;
  value: number;
  step: number;
}

/**
 * The last value of the run's headline metric, read from its metrics files the way the dashboard reads them (verl
 * metrics.jsonl, else output.log; TRL output.log, else trainer_state.json): the reward for GRPO/PPO (verl
 * `critic/score/mean`, TRL `reward`), the reward margin for DPO, the loss for SFT. Read through the dashboard's metrics
 * `cache`, if given, so a big log read when its run ends is not read again when its dashboard opens.
 */
export async function lastHeadline(host: Host, run: RunInfo, cache?: MetricsCache): Promise<LastMetric | undefined> {
  const metrics = new RunMetrics(host, { host: run.host, dir: run.record.dir, framework: run.record.framework }, cache);
  await metrics.poll({ final: true });
  const h = headline(metrics.series, metrics.framework);
  for (const id of primaryHeadlines(run.record.algorithm)) {
    const m = h.metrics[id];
    if (m) return { title: HEADLINES.find((d) => d.id === id)!.title.toLowerCase(), value: m.value, step: m.step };
  }
  return undefined;
}

/** Most lines of the log shown when a run fails, and most characters in all. */
const EXCERPT_LINES = 5;
const EXCERPT_CHARS = 300;

/**
 * The last lines of a log tail as a notification shows them: ANSI codes and other control characters removed, a
 * progress bar's redraws (`\r`) reduced to the last, blank lines skipped; at most 5 lines and ~300 characters (a
 * longer last line keeps its end, where the error is).
 */
export function logExcerpt(tail: string, maxLines = EXCERPT_LINES, maxChars = EXCERPT_CHARS): string {
  const lines = stripAnsi(tail)
    .split('\n')
    .map((l) => (l.split('\r').findLast((seg) => seg.trim()) ?? '').replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, '').trim())
    .filter(Boolean);
  const out: string[] = [];
  let chars = 0;
  for (let i = lines.length - 1; i >= 0 && out.length < maxLines; i--) {
    const line = lines[i]!;
    if (!out.length && line.length > maxChars) return `…${line.slice(line.length - maxChars + 1)}`;
    if (chars + line.length + out.length > maxChars) break;
    out.unshift(line);
    chars += line.length;
  }
  return out.join('\n');
}

/** How a run ended, in one sentence; a finished run's last headline metric, a failed or lost run's last log lines. */
export function endedMessage(run: RunInfo, metric?: LastMetric): string {
  const what = `Run ${run.record.name} (${run.host}) ${stateLabel(run)}`;
  switch (run.state) {
    case 'succeeded':
      return metric ? `${what} · ${metric.title} ${formatValue(metric.value)} at step ${metric.step}` : what;
    case 'failed':
    case 'lost': {
      // stateLabel already names a failed run's reason when it has no exit code.
      const reason = run.reason && !(run.state === 'failed' && run.exitCode === undefined) ? `: ${run.reason}` : '';
      const lines = logExcerpt(run.logTail);
      // A notification shows its text on one line: a visible mark between the log's lines.
      return `${what}${reason}.${lines ? ` Last lines of its log: ${lines.replace(/\n/g, ' ⏎ ')}` : ' Its log is empty.'}`;
    }
    default:
      return `${what}${run.reason ? `: ${run.reason}` : ''}`;
  }
}

export function goneMessage(w: WatchedRun): string {
  return `Run ${w.id} is no longer listed on ${w.host}: its run folder was deleted, or runsDir of ${w.host} in medrl.yaml changed.`;
}

/** Three significant digits, as the Runs view shows metrics; NaN and infinities as such (a diverged run must be seen). */
function formatValue(v: number): string {
  return Number.isFinite(v) ? v.toPrecision(3) : String(v);
}
