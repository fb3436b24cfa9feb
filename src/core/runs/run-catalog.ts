import type { ResolvedHost } from '../config/workspace-config';
import type { HostPool } from '../remote/host-pool';
import { errorMessage, type Problem } from '../errors/located-error';
import { listRuns, type RunInfo } from './list-runs';

export interface HostRuns {
  host: ResolvedHost;
  runs: RunInfo[];
  problems: Problem[];
  /** Set when the host could not be asked (down, no connection): its runs are unknown, not gone. */
  error?: string;
}

/** The runs of every host, one round trip each, in parallel; a host that fails is reported, the others still list. */
export async function listAllRuns(pool: HostPool, hosts: ResolvedHost[]): Promise<HostRuns[]> {
  return Promise.all(
    hosts.map(async (h): Promise<HostRuns> => {
      try {
        const listing = await listRuns(await pool.get(h.name), h.runsDir);
        return { host: h, ...listing };
      } catch (err) {
        return { host: h, runs: [], problems: [], error: errorMessage(err) };
      }
    }),
  );
}

/** A run by id (or a unique prefix of it) on any host. */
export async function findRun(pool: HostPool, hosts: ResolvedHost[], id: string): Promise<RunInfo> {
  return (await findRuns(pool, hosts, [id]))[0]!;
}

/** Runs by id (or unique prefixes), from one listing of every host. */
export async function findRuns(pool: HostPool, hosts: ResolvedHost[], ids: string[]): Promise<RunInfo[]> {
  const all = await listAllRuns(pool, hosts);
  return ids.map((id) => matchRun(all, hosts, id));
}

function matchRun(all: HostRuns[], hosts: ResolvedHost[], id: string): RunInfo {
  const matches = all.flatMap((h) => h.runs).filter((r) => r.record.id === id || r.record.id.startsWith(id));
  const exact = matches.find((r) => r.record.id === id);
  if (exact) return exact;
  if (matches.length === 1) return matches[0]!;
  const down = all.filter((h) => h.error).map((h) => `${h.host.name} (${h.error})`);
  if (matches.length > 1) throw new Error(`"${id}" matches ${matches.length} runs: ${matches.map((r) => r.record.id).join(', ')}`);
  throw new Error(`no run "${id}" on ${hosts.map((h) => h.name).join(', ')}${down.length ? `; could not ask ${down.join(', ')}` : ''}`);
}
