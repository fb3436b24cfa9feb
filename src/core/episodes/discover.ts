import { basename, posix } from 'node:path';
import type { Host } from '../remote/host';
import { openEpisodeFile, stepFromName, type EpisodeFile } from './episode-file';

/** A set of step files read together: a run's `rollouts/`, `validation/` or TRL `completions/`, or one folder or file. */
export interface EpisodeCollection {
  name: string;
  dir: string;
  /** Sorted by step. */
  files: EpisodeFile[];
}

const RUN_SUBDIRS = ['rollouts', 'validation', 'output/completions', 'completions'];

function isEpisodeFile(name: string): boolean {
  return name.endsWith('.jsonl') || (name.endsWith('.parquet') && name.startsWith('completions'));
}

/** The episode files of one folder, by step (the step in the file name, else their order). */
async function folderCollection(host: Host, dir: string, name: string): Promise<EpisodeCollection | undefined> {
  const entries = (await host.readdir(dir)).filter((e) => e.kind === 'file' && isEpisodeFile(e.name));
  if (!entries.length) return undefined;
  const named = entries.map((e, i) => ({ e, step: stepFromName(e.name) ?? i }));
  named.sort((a, b) => a.step - b.step || a.e.name.localeCompare(b.e.name));
  return { name, dir, files: named.map(({ e, step }) => openEpisodeFile(host, posix.join(dir, e.name), step)) };
}

/**
 * What there is to replay at a path: a run folder gives one collection per trainer output (`rollouts`, `validation`,
 * TRL `completions`); a folder of step files gives one; a single .jsonl or .parquet file gives one with that file.
 */
export async function discoverEpisodes(host: Host, path: string): Promise<EpisodeCollection[]> {
  const abs = await host.resolvePath(path);
  const st = await host.stat(abs);
  if (st.kind === 'file') {
    if (!abs.endsWith('.jsonl') && !abs.endsWith('.parquet'))
      throw new Error(`${host.name}:${abs}: not an episode file (expected .jsonl or .parquet)`);
    const dir = posix.dirname(abs);
    return [{ name: basename(dir), dir, files: [openEpisodeFile(host, abs, stepFromName(abs) ?? 0)] }];
  }
  const out: EpisodeCollection[] = [];
  const subdirs = new Set((await host.readdir(abs)).filter((e) => e.kind === 'directory').map((e) => e.name));
  for (const sub of RUN_SUBDIRS) {
    const [first] = sub.split('/');
    if (!subdirs.has(first!)) continue;
    const dir = posix.join(abs, sub);
    const c = await folderCollection(host, dir, basename(sub)).catch((err: unknown) => {
      if ((err as Error).name === 'HostFileNotFoundError') return undefined;
      throw err;
    });
    if (c) out.push(c);
  }
  if (out.length) return out;
  const own = await folderCollection(host, abs, basename(abs));
  if (!own)
    throw new Error(
      `${host.name}:${abs}: no episodes here: expected {step}.jsonl dumps, completions_{step}.parquet, JSONL trajectories, or a run folder with rollouts/ or validation/`,
    );
  return [own];
}
