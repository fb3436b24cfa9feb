import type { ResolvedHost } from '../config/workspace-config';
import type { Problem } from '../errors/located-error';
import type { Host } from '../remote/host';
import { APPS_QUERY, GPU_QUERY, parseAppsQuery, parseGpuQuery, type Gpu, type GpuProcess } from '../remote/nvidia-smi';
import { shellPath, shellQuote } from '../remote/shell-quote';
import { hostPrelude } from '../remote/host-prelude';
import { listRunsScript, parseRunListing } from './list-runs';
import { isActive } from './run-record';

/** What the hosts view shows under a host, from one command on it. */
export interface HostStatus {
  gpus: Gpu[];
  processes: GpuProcess[];
  /** Why there are no GPUs (no nvidia-smi, driver error), if so. */
  gpuError?: string;
  disk?: { path: string; totalBytes: number; availableBytes: number };
  /** Runs queued or running, judged as the Runs view judges them (pid alive, Slurm/Ray state), so the two never disagree. */
  activeRuns: string[];
  runCount: number;
  problems: Problem[];
}

const MARK = '\x1emedrl:';

/**
 * One script that prints every section of a host's status: GPUs and their processes (nvidia-smi), free disk where the
 * runs are, and the run folders still active. A refresh is one round trip however many runs there are. The host's
 * setup lines and env apply to nvidia-smi only (a module or PATH may provide it), in a subshell: disk and runs are read
 * by system tools (`command -p`) that nothing the setup lines define can replace.
 */
export function hostStatusScript(host: Pick<ResolvedHost, 'runsDir' | 'setup' | 'env'>): string {
  const runs = shellPath(host.runsDir.replace(/\/+$/, '') || '/');
  const m = (s: string) => `printf '${MARK}%s\\n' ${shellQuote(s)}`;
  return [
    `(\n${hostPrelude(host)}`,
    m('gpus'),
    `if command -v nvidia-smi >/dev/null 2>&1; then ${GPU_QUERY} 2>&1; printf '${MARK}gpus-exit %s\\n' "$?"; ${m('apps')}; ${APPS_QUERY} 2>/dev/null; else printf '${MARK}gpus-exit 127\\n'; fi)`,
    m('disk'),
    // df of the runs folder, or of its nearest existing parent before the first run.
    `d=${runs}; while [ ! -e "$d" ] && [ "$d" != / ]; do d=$(command -p dirname "$d"); done; printf '%s\\n' "$d"; command -p df -Pk "$d" 2>&1`,
    m('runs'),
    `(\n${listRunsScript(host.runsDir)})`,
    m('end'),
  ].join('\n');
}

/** Parses what hostStatusScript printed; a missing or garbled section is a problem, the other sections still count. */
export function parseHostStatus(text: string, source: string, host: { name: string; runsDir: string }): HostStatus {
  const sections = new Map<string, string>();
  let name: string | undefined;
  let buf: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(MARK)) {
      if (name) sections.set(name, buf.join('\n'));
      name = line.slice(MARK.length);
      buf = [];
    } else buf.push(line);
  }
  if (name) sections.set(name, buf.join('\n'));
  const status: HostStatus = { gpus: [], processes: [], activeRuns: [], runCount: 0, problems: [] };
  if (!sections.has('end'))
    status.problems.push({ file: source, message: 'the status script stopped early: output is incomplete', severity: 'warning' });

  const gpuExit = [...sections.keys()].find((k) => k.startsWith('gpus-exit '));
  const code = gpuExit ? Number(gpuExit.split(' ')[1]) : undefined;
  if (code === 127) status.gpuError = 'nvidia-smi not found (no NVIDIA driver on this host?)';
  else if (code !== 0)
    status.gpuError = `nvidia-smi failed (exit ${code ?? 'unknown'}): ${(sections.get('gpus') ?? '').trim().split('\n')[0] ?? ''}`;
  else {
    const g = parseGpuQuery(sections.get('gpus') ?? '', `${source} (nvidia-smi --query-gpu)`);
    const a = parseAppsQuery(sections.get('apps') ?? '', `${source} (nvidia-smi --query-compute-apps)`);
    status.gpus = g.gpus;
    status.processes = a.processes;
    status.problems.push(...g.problems, ...a.problems);
  }

  const diskLines = (sections.get('disk') ?? '').split('\n').filter((l) => l.trim());
  const path = diskLines[0];
  const df = diskLines.length > 1 ? diskLines[diskLines.length - 1] : undefined;
  const cols = df?.trim().split(/\s+/) ?? [];
  // POSIX df -Pk: Filesystem 1024-blocks Used Available Capacity Mounted-on
  if (path && cols.length >= 6 && /^\d+$/.test(cols[1]!) && /^\d+$/.test(cols[3]!)) {
    status.disk = { path, totalBytes: Number(cols[1]) * 1024, availableBytes: Number(cols[3]) * 1024 };
  } else
    status.problems.push({
      file: source,
      message: `df gave no usable line for the runs folder: ${(df ?? '').trim() || 'nothing'}`,
      severity: 'warning',
    });

  const listing = parseRunListing(host.name, host.runsDir, sections.get('runs') ?? '');
  status.runCount = listing.runs.length;
  status.activeRuns = listing.runs.filter((r) => isActive(r.state)).map((r) => r.record.id);
  status.problems.push(...listing.problems);
  return status;
}

/** A host's status in one round trip. */
export async function queryHostStatus(
  host: Host,
  entry: Pick<ResolvedHost, 'runsDir' | 'setup' | 'env'>,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<HostStatus> {
  const r = await host.exec(hostStatusScript(entry), { timeoutMs: opts.timeoutMs ?? 30_000, signal: opts.signal, batch: !opts.signal });
  if (r.timedOut) throw new Error(`${host.name}: status did not answer within ${Math.round((opts.timeoutMs ?? 30_000) / 1000)} s`);
  return parseHostStatus(r.stdout, `${host.name}: status`, { name: host.name, runsDir: entry.runsDir });
}
