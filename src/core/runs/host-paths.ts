import { posix } from 'node:path';

/** Where a run's relative paths land on its host: `~` is the host's home, anything else relative is under the workdir. */
export interface HostDirs {
  home: string;
  workdir: string;
}

/** An absolute path on the host (verl under Ray runs in a copy of the working dir, so launchers pass absolute paths). */
export function hostPath(path: string, dirs: HostDirs): string {
  if (path === '~') return dirs.home;
  if (path.startsWith('~/')) return posix.join(dirs.home, path.slice(2));
  if (path.startsWith('/')) return posix.normalize(path);
  return posix.join(dirs.workdir, path);
}

/** A model given as a path (absolute, `~`, `./`, `../`) is made absolute; anything else is a hub id and stays as written. */
export function modelPath(model: string, dirs: HostDirs): string {
  return /^(\/|~|\.\.?\/)/.test(model) ? hostPath(model, dirs) : model;
}

export function asList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
