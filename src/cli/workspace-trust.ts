import { mkdir, readFile, realpath, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { z } from 'zod';
import type { ResolvedHost } from '../core/config/workspace-config';
import { LocatedError } from '../core/errors/located-error';
import { fieldPath, plainIssues } from '../core/errors/plain-zod';
import { shellQuote } from '../core/remote/shell-quote';

/**
 * Workspace trust on the command line, as VS Code's Restricted Mode is in the window: medrl.yaml and run specs choose
 * setup and env lines, trainer commands, reward functions and services, so the CLI runs none of them for a folder the
 * user has not trusted. The trusted folders are kept outside every workspace, so a repository cannot trust itself.
 */
export function trustFile(): string {
  const xdg = process.env.XDG_CONFIG_HOME;
  return join(xdg?.startsWith('/') ? xdg : join(homedir(), '.config'), 'medrl', 'trusted-workspaces.json');
}

const trustSchema = z.strictObject({ version: z.literal(1), folders: z.array(z.string().startsWith('/')) });

/** The trusted folders; a file that is not what `medrl trust` writes is an error naming it (it is never overwritten). */
export async function trustedFolders(): Promise<string[]> {
  const file = trustFile();
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new LocatedError(`cannot read the trusted workspaces`, [
      { file, severity: 'error', message: 'not valid JSON: fix it, or delete it and trust your workspaces again (medrl trust DIR)' },
    ]);
  }
  const parsed = trustSchema.safeParse(data);
  if (!parsed.success) {
    const first = plainIssues(parsed.error.issues)[0];
    throw new LocatedError(`cannot read the trusted workspaces`, [
      {
        file,
        severity: 'error',
        field: first && fieldPath(first.path),
        message: `${first?.message ?? 'invalid'}: fix it, or delete it and trust your workspaces again`,
      },
    ]);
  }
  return parsed.data.folders;
}

/** The folder a workspace argument names: a folder, or the folder of a medrl.yaml; links resolved (trust is per real folder). */
export async function workspaceFolder(path: string): Promise<string> {
  const real = await realpath(path);
  return (await stat(real)).isDirectory() ? real : dirname(real);
}

/** The trusted folder that covers `folder` (itself or a parent: trusting a folder trusts what is inside it), if any. */
export async function trustedBy(folder: string): Promise<string | undefined> {
  const real = await workspaceFolder(folder);
  return (await trustedFolders()).find((t) => real === t || real.startsWith(t.endsWith(sep) ? t : t + sep));
}

/** Adds or removes a folder; written through a temporary file and a rename, 0600 in a 0700 folder. */
export async function setTrusted(folder: string, trusted: boolean): Promise<boolean> {
  const folders = await trustedFolders();
  const next = trusted ? [...new Set([...folders, folder])] : folders.filter((f) => f !== folder);
  if (next.length === folders.length && next.every((f, i) => f === folders[i])) return false;
  const file = trustFile();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ version: 1, folders: next }, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return true;
}

/**
 * Throws unless the workspace of `configFile` is trusted, where `what` would run code it chose. With a host entry, only
 * when that host has setup or env lines to run (without them nothing of the workspace runs there). No medrl.yaml: no
 * workspace chose anything.
 */
export async function requireTrust(
  configFile: string | undefined,
  what: string,
  entry?: Pick<ResolvedHost, 'setup' | 'env'>,
): Promise<void> {
  if (configFile === undefined) return;
  if (entry && entry.setup.length === 0 && Object.keys(entry.env).length === 0) return;
  const folder = await workspaceFolder(configFile);
  if (await trustedBy(folder)) return;
  throw new Error(
    `${what} runs code this workspace chose (${entry ? "the host's setup and env lines in" : 'setup and env lines, trainer commands, reward functions and services of'} ${configFile}), and ${folder} is not a trusted workspace. Read its medrl.yaml and run specs, then trust it: medrl trust ${shellQuote(folder)}`,
  );
}
