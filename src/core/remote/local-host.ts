import { spawn as spawnChild } from 'node:child_process';
import { homedir } from 'node:os';
import { mkdir, open, readdir, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { LOCAL_HOST } from '../config/local-host-name';
import {
  collectExec,
  HostFileNotFoundError,
  PRIVATE_DIR_MODE,
  privateFileMode,
  rangeBuffer,
  type DirEntry,
  type ExecOptions,
  type ExecResult,
  type FileStat,
  type Host,
  type HostStats,
  type PortForward,
  type ReadRange,
  type SpawnedProcess,
} from './host';

function expand(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

function kindOf(s: { isFile(): boolean; isDirectory(): boolean }): FileStat['kind'] {
  return s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other';
}

/** The built-in `local` host: jobs are local processes, files are local files. No GPU needed. */
export class LocalHost implements Host {
  readonly kind = 'local' as const;
  private readonly counters: HostStats = { bytesRead: 0, roundTrips: 0 };

  constructor(readonly name: string = LOCAL_HOST) {}

  async exec(script: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return collectExec(await this.spawn(script, opts), opts);
  }

  async spawn(script: string, opts: Omit<ExecOptions, 'stdin' | 'timeoutMs'> = {}): Promise<SpawnedProcess> {
    this.counters.roundTrips++;
    // Own process group, so kill() and timeouts stop the whole tree the command started; umask 077: what it makes is
    // the user's alone.
    const child = spawnChild('/bin/sh', ['-c', `umask 077\n${script}`], {
      cwd: opts.cwd ? expand(opts.cwd) : undefined,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    const kill = (sig: NodeJS.Signals = 'SIGTERM') => {
      if (child.pid === undefined || child.exitCode !== null) return;
      try {
        process.kill(-child.pid, sig);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    };
    opts.signal?.addEventListener('abort', () => kill('SIGTERM'), { once: true });
    return { stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exited, kill };
  }

  async readFile(path: string, range?: ReadRange): Promise<Buffer> {
    const file = expand(path);
    const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new HostFileNotFoundError(this.name, path) : err;
    });
    try {
      const size = (await fh.stat()).size;
      const start = Math.min(range?.start ?? 0, size);
      const end = Math.min(range?.end ?? size, size);
      // Unzeroed (or the caller's): the reads below fill it, and a short read is trimmed, so no stale bytes are returned.
      const buf = rangeBuffer(Math.max(0, end - start), range?.into);
      let off = 0;
      while (off < buf.length) {
        const { bytesRead } = await fh.read(buf, off, buf.length - off, start + off);
        if (bytesRead === 0) break;
        off += bytesRead;
      }
      this.counters.bytesRead += off;
      return off === buf.length ? buf : buf.subarray(0, off);
    } finally {
      await fh.close();
    }
  }

  async *readChunks(path: string, opts: { start?: number; end?: number; signal?: AbortSignal } = {}): AsyncGenerator<Buffer> {
    const fh = await open(expand(path), 'r').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new HostFileNotFoundError(this.name, path) : err;
    });
    const end = opts.end === undefined ? undefined : opts.end - 1;
    if (end !== undefined && end < (opts.start ?? 0)) return void (await fh.close());
    const stream = fh.createReadStream({ start: opts.start ?? 0, end, highWaterMark: 1 << 20, signal: opts.signal });
    this.counters.roundTrips++;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      this.counters.bytesRead += chunk.length;
      yield chunk;
    }
  }

  /** Private whatever the caller asks: no group or other bits (a file that existed gets the mode too). */
  async writeFile(path: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
    const file = expand(path);
    const mode = privateFileMode(opts.mode);
    await mkdir(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    await writeFile(file, data, { mode });
    await chmod(file, mode);
  }

  async stat(path: string): Promise<FileStat> {
    const s = await stat(expand(path)).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new HostFileNotFoundError(this.name, path) : err;
    });
    return { size: s.size, mtimeMs: s.mtimeMs, kind: kindOf(s) };
  }

  async readdir(path: string): Promise<DirEntry[]> {
    const dir = expand(path);
    const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new HostFileNotFoundError(this.name, path) : err;
    });
    const out: DirEntry[] = [];
    for (const name of names.sort()) {
      const s = await stat(join(dir, name)).catch(() => undefined);
      if (s) out.push({ name, size: s.size, mtimeMs: s.mtimeMs, kind: kindOf(s) });
    }
    return out;
  }

  async mkdir(path: string): Promise<void> {
    await mkdir(expand(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  }

  async remove(path: string): Promise<void> {
    await rm(expand(path), { recursive: true, force: true });
  }

  async resolvePath(path: string): Promise<string> {
    return expand(path);
  }

  async forwardPort(remotePort: number): Promise<PortForward> {
    return { localPort: remotePort, close: async () => {} };
  }

  stats(): HostStats {
    return { ...this.counters };
  }

  async dispose(): Promise<void> {}
}
