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
  if (host.kind === 'local') return localPath;
  const remote = await host.resolvePath(`${REMOTE_DIR}/functions/${shortHash(localPath)}/${basename(localPath)}`);
  const data = await readFile(localPath);
  const there = await host.readFile(remote).catch(() => undefined);
  if (!there || !there.equals(data)) await host.writeFile(remote, data);
  return remote;
}
