import { once } from 'node:events';
import type { Host } from './host';
import { shellPath } from './shell-quote';

/** A file being written on a host by `cat`, fed through its stdin. */
export interface CatInto {
  /** Writes bytes, waiting while the pipe is full; false once `cat` has exited (a full disk, no permission). */
  write(bytes: Uint8Array): Promise<boolean>;
  /** Ends stdin and waits for `cat`: its exit and, when it failed, why (its stderr, else the pipe's error). */
  end(): Promise<{ code: number | null; signal: string | null; failure: string }>;
  kill(): Promise<void>;
}

/**
 * Streams bytes into `path` on a host (local and SSH alike, under the host's umask) through `cat`: the one way files are
 * written there, so uploads and redacted copies behave the same when the destination fails early. `append` adds to the
 * end of the file (`>>`, O_APPEND) instead of replacing it: for logs that are never rewritten, such as reviews.
 */
export async function catInto(host: Host, path: string, opts: { signal?: AbortSignal; append?: boolean } = {}): Promise<CatInto> {
  const proc = await host.spawn(`cat ${opts.append ? '>>' : '>'} ${shellPath(path)}`, { signal: opts.signal });
  const stderr: Buffer[] = [];
  proc.stderr.on('data', (d: Buffer) => stderr.push(d));
  proc.stdout.resume();
  // A destination that fails early closes stdin: the exit status and stderr say why, with this.
  let stdinError: Error | undefined;
  proc.stdin.on('error', (err: Error) => (stdinError ??= err));
  let exited = false;
  // Both outcomes stop the writer; a lost connection is reported where `proc.exited` is awaited in `end`.
  const ended = () => (exited = true);
  proc.exited.then(ended, ended);
  const failure = () => Buffer.concat(stderr).toString('utf8').trim() || stdinError?.message || 'no message';
  return {
    async write(bytes) {
      if (exited) return false;
      if (!proc.stdin.write(bytes)) await Promise.race([once(proc.stdin, 'drain'), proc.exited]);
      return !exited;
    },
    async end() {
      proc.stdin.end();
      const { code, signal } = await proc.exited;
      return { code, signal: signal ?? null, failure: failure() };
    },
    async kill() {
      proc.kill();
      await proc.exited.catch(() => undefined);
    },
  };
}
