import type { Readable, Writable } from 'node:stream';

/** Options of a command run on a host. `cwd` may start with `~/`. */
export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string | Uint8Array;
  /** Kills the command (its whole process group) after this long; the result then has `timedOut: true`. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * A short command that reads no stdin (a status poll): an SSH host may run it in its long-lived shell instead of a new
   * session, which saves sshd's session setup (tens of ms). Commands run one after another there; env, cwd and
   * timeoutMs apply as usual. Ignored by the local host.
   */
  batch?: boolean;
}

export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

export interface SpawnedProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export interface FileStat {
  size: number;
  mtimeMs: number;
  kind: 'file' | 'directory' | 'other';
}

export interface DirEntry extends FileStat {
  name: string;
}

/** What a host has done, for tests and benchmarks (e.g. "a preview read only the bytes it needed"). */
export interface HostStats {
  bytesRead: number;
  roundTrips: number;
}

export interface PortForward {
  localPort: number;
  close(): Promise<void>;
}

/** A byte range of a file to read, and maybe the buffer to read it into. */
export interface ReadRange {
  start: number;
  end?: number;
  into?: Buffer;
}

/** Folders the product makes on a host are the user's alone (what `umask 077` gives). */
export const PRIVATE_DIR_MODE = 0o700;

/** A file's mode as Host.writeFile applies it: 0600 unless asked otherwise, and never group or other bits. */
export function privateFileMode(mode?: number): number {
  return (mode ?? 0o600) & PRIVATE_DIR_MODE;
}

/**
 * A machine that runs jobs and holds files: the built-in local host or an SSH host. Every remote feature (runs,
 * checkpoints, datasets, episodes, services, reward workers) goes through this interface, so each works the same on both.
 * Scripts are POSIX `sh` command lines: every value spliced into one must go through `shellQuote`.
 */
export interface Host {
  readonly name: string;
  readonly kind: 'local' | 'ssh';
  exec(script: string, opts?: ExecOptions): Promise<ExecResult>;
  spawn(script: string, opts?: Omit<ExecOptions, 'stdin' | 'timeoutMs'>): Promise<SpawnedProcess>;
  /**
   * Reads a file, or the byte range [start, end) of it, without reading the rest. `into`: a buffer of at least
   * end - start bytes the host may fill and return a view of, so a reader going through a large file in ranges
   * recycles its buffers instead of allocating one per range.
   */
  readFile(path: string, range?: ReadRange): Promise<Buffer>;
  /**
   * The bytes of a file from `start` (to `end`, else to its end) as they arrive, without holding the whole range: for
   * transfers. Stopping the iteration early, or `signal`, stops the read on the host.
   */
  readChunks(path: string, opts?: { start?: number; end?: number; signal?: AbortSignal }): AsyncIterable<Buffer>;
  /** Writes a file the user's alone: mode 0600 by default, never group or other bits (`mode` & 0700); parents 0700. */
  writeFile(path: string, data: string | Uint8Array, opts?: { mode?: number }): Promise<void>;
  stat(path: string): Promise<FileStat>;
  readdir(path: string): Promise<DirEntry[]>;
  /** Creates a folder and its parents, 0700. Commands (exec, spawn) run under `umask 077`. */
  mkdir(path: string): Promise<void>;
  /** Removes a file or a folder with everything in it. */
  remove(path: string): Promise<void>;
  /** The absolute path of `path` on the host (`~` expanded). */
  resolvePath(path: string): Promise<string>;
  /** Makes a port on the host reachable on 127.0.0.1 here (local host: the same port). */
  forwardPort(remotePort: number, remoteHost?: string): Promise<PortForward>;
  stats(): HostStats;
  dispose(): Promise<void>;
}

/** Thrown when a path does not exist on a host; says which host and path. */
/** Where a range of `len` bytes is read: the caller's `into` when it has room (a view of it), else a new unzeroed buffer. */
export function rangeBuffer(len: number, into: Buffer | undefined): Buffer {
  return into && into.length >= len ? into.subarray(0, len) : Buffer.allocUnsafe(len);
}

export class HostFileNotFoundError extends Error {
  constructor(
    readonly host: string,
    readonly path: string,
  ) {
    super(`${host}: no such file or folder: ${path}`);
    this.name = 'HostFileNotFoundError';
  }
}

/** Exec and fail with the command's stderr (and where) unless it exits 0. */
export async function execChecked(host: Host, script: string, opts?: ExecOptions): Promise<ExecResult> {
  const r = await host.exec(script, opts);
  if (r.code !== 0) {
    const why = r.timedOut
      ? `timed out after ${opts?.timeoutMs} ms`
      : r.signal
        ? `killed by ${r.signal}`
        : r.code === null
          ? "the server closed the command's channel without an exit status"
          : `exit code ${r.code}`;
    throw new Error(`${host.name}: command failed (${why}): ${r.stderr.trim() || r.stdout.trim() || script}`);
  }
  return r;
}

/** Runs a spawned command to its end: feeds stdin, collects the output, kills it (whole group) after `timeoutMs`. */
export async function collectExec(proc: SpawnedProcess, opts: ExecOptions = {}): Promise<ExecResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.stdout.on('data', (d: Buffer) => out.push(d));
  proc.stderr.on('data', (d: Buffer) => err.push(d));
  proc.stdin.on('error', () => {
    // the command may exit without reading its input; its exit status says what happened
  });
  proc.stdin.end(opts.stdin ?? '');
  let timedOut = false;
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          proc.kill('SIGKILL');
        }, opts.timeoutMs);
  const { code, signal } = await proc.exited.finally(() => clearTimeout(timer));
  return {
    code,
    signal,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    ...(timedOut ? { timedOut } : {}),
  };
}
