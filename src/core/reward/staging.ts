import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Host } from '../remote/host';
import { packageRoot } from '../package-root';

/** Where reward workers keep their files on a remote host. */
const REMOTE_DIR = '~/.medrl/playground';

/** The worker harness shipped with the extension (python/reward_worker.py). */
export function localHarnessPath(): string {
  return join(packageRoot(__dirname), 'python', 'reward_worker.py');
}

function shortHash(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 12);
}

/** The harness's path on `host`: the shipped file on the local host, an uploaded copy (named by its hash) elsewhere. */
export async function harnessOn(host: Host): Promise<string> {
  const local = localHarnessPath();
  if (host.kind === 'local') return local;
  const data = await readFile(local);
  const remote = await host.resolvePath(`${REMOTE_DIR}/reward_worker-${shortHash(data)}.py`);
  await host.writeFile(remote, data);
  return remote;
}

/**
 * A local reward function file as the host sees it: itself on the local host; on a remote host a copy under
 * ~/.medrl/playground/functions/<hash of its path>/ (same name), rewritten when the local file changes so the worker reloads it.
 */
export async function functionOn(host: Host, localPath: string): Promise<string> {
  return functionFilesOn(host, localPath, { [basename(localPath)]: localPath });
}

/**
 * Like `functionOn`, with the Python files the function imports (`files`: path relative to the function's folder →
 * local path, the function's own file among them), staged beside it with their layout kept.
 */
export async function functionFilesOn(host: Host, localPath: string, files: Record<string, string>): Promise<string> {
  if (host.kind === 'local') return localPath;
  const folder = await host.resolvePath(`${REMOTE_DIR}/functions/${shortHash(localPath)}`);
  for (const [name, local] of Object.entries(files)) {
    const remote = `${folder}/${name}`;
    const data = await readFile(local);
    const there = await host.readFile(remote).catch(() => undefined);
    if (!there || !there.equals(data)) await host.writeFile(remote, data);
  }
  return `${folder}/${basename(localPath)}`;
}
