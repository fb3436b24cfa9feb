import type { Readable, Writable } from 'node:stream';

/** Options of a command run on a host. `cwd` may start with `~/`. */
export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string | Uint8Array;
  /** Kills the command (its whole process group) after this long; the result then has `timedOut: true`. */
  timeoutMs?: number;
  signal?: AbortSignal;
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
  /** Reads a file, or the byte range [start, end) of it, without reading the rest. */
  readFile(path: string, range?: { start: number; end?: number }): Promise<Buffer>;
  writeFile(path: string, data: string | Uint8Array, opts?: { mode?: number }): Promise<void>;
  stat(path: string): Promise<FileStat>;
  readdir(path: string): Promise<DirEntry[]>;
  /** Creates a folder and its parents. */
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
export class HostFileNotFoundError extends Error {
  constructor(readonly host: string, readonly path: string) {
    super(`${host}: no such file or folder: ${path}`);
    this.name = 'HostFileNotFoundError';
  }
}

/** Exec and fail with the command's stderr (and where) unless it exits 0. */
export async function execChecked(host: Host, script: string, opts?: ExecOptions): Promise<ExecResult> {
  const r = await host.exec(script, opts);
  if (r.code !== 0) {
    const why = r.timedOut ? `timed out after ${opts?.timeoutMs} ms` : r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`;
    throw new Error(`${host.name}: command failed (${why}): ${r.stderr.trim() || r.stdout.trim() || script}`);
  }
  return r;
}
