import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import type { HostPool } from '../remote/host-pool';
import { shellPath } from '../remote/shell-quote';
import { catInto } from '../remote/cat-into';

/** Bytes read from the source and written to the destination at a time: memory stays bounded for multi-GB datasets. */
const CHUNK = 8 * 1024 * 1024;

interface UploadOptions {
  /** Bytes copied so far of the file being uploaded. */
  onProgress?(file: string, copied: number, total: number): void;
  signal?: AbortSignal;
}

/**
 * Copies files from one host into a folder on another; returns the paths written. Each file streams through `cat` on the
 * destination (the same for local and SSH hosts) into a temporary name that is renamed when every byte has arrived, so an
 * interrupted upload never leaves a truncated file under the dataset's name.
 */
export async function uploadFiles(
  pool: HostPool,
  from: Host,
  files: string[],
  toHost: string,
  dir: string,
  opts: UploadOptions = {},
): Promise<string[]> {
  const to = await pool.get(toHost);
  await to.mkdir(dir);
  const out: string[] = [];
  for (const f of files) {
    const dest = posix.join(dir, posix.basename(f));
    await copyFile(from, f, to, dest, opts);
    out.push(dest);
  }
  return out;
}

async function copyFile(from: Host, file: string, to: Host, dest: string, opts: UploadOptions): Promise<void> {
  const { size } = await from.stat(file);
  const part = `${dest}.medrl-upload`;
  const cat = await catInto(to, part, { signal: opts.signal });
  try {
    for (let start = 0; start < size; start += CHUNK) {
      opts.signal?.throwIfAborted();
      const bytes = await from.readFile(file, { start, end: Math.min(start + CHUNK, size) });
      if (!(await cat.write(bytes))) break;
      opts.onProgress?.(file, start + bytes.length, size);
    }
  } catch (err) {
    await cat.kill();
    await removePart(to, part);
    throw err;
  }
  const { code, signal, failure } = await cat.end();
  if (code !== 0) {
    await removePart(to, part);
    const why = signal ? `killed by ${signal}` : `exit code ${code}`;
    throw new Error(`${to.name}: uploading ${from.name}:${file} to ${dest} failed (${why}): ${failure}`);
  }
  await execChecked(to, `mv -f -- ${shellPath(part)} ${shellPath(dest)}`);
  const written = (await to.stat(dest)).size;
  if (written !== size) throw new Error(`${to.name}: ${dest} has ${written} bytes after the upload, ${from.name}:${file} has ${size}`);
}

/** `rm -f`, not a recursive remove: a folder in the way under the temporary name is the user's, never ours to delete. */
async function removePart(host: Host, part: string): Promise<void> {
  await execChecked(host, `if [ ! -d ${shellPath(part)} ]; then rm -f -- ${shellPath(part)}; fi`);
}
