import { createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { posix } from 'node:path';
import type { Client, ClientChannel, SFTPWrapper, Stats } from 'ssh2';
import {
  collectExec,
  execChecked,
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
import { BatchShell } from './batch-shell';
import { answerWithin } from './answer-within';
import { resolveSshRoute } from './ssh-config';
import { connectRoute, SshConnectError, type SshContext } from './ssh-connect';
import { shellPath, shellQuote } from './shell-quote';
import { errorMessage } from '../errors/located-error';

/** What the hosts view shows about a connection. */
export type SshHostState =
  | { state: 'disconnected'; reason?: string }
  | { state: 'connecting' }
  | { state: 'connected' }
  | { state: 'auth-needed'; reason: string }
  | { state: 'unreachable'; reason: string };

/** The server did not answer a channel request (exec, SFTP, forward) in time. */
class SshRequestTimeoutError extends Error {
  constructor(host: string, stage: string, ms: number) {
    super(`${host}: the SSH server did not answer within ${Math.round(ms / 1000)} s while ${stage}`);
    this.name = 'SshRequestTimeoutError';
  }
}

/** A command or transfer that was running when the connection dropped. The next call reconnects. */
export class HostConnectionLostError extends Error {
  constructor(host: string, what: string, cause?: string) {
    super(`${host}: connection lost${cause ? ` (${cause})` : ''} while ${what}; the next call reconnects`);
    this.name = 'HostConnectionLostError';
  }
}

interface Connection {
  clients: Client[];
  client: Client;
  sftp?: Promise<SFTPWrapper>;
  batch?: Promise<BatchShell>;
  /** Fails everything in flight on this connection when it drops. */
  inflight: Set<(err: Error) => void>;
  lost?: string;
}

/** SFTP status codes (draft-ietf-secsh-filexfer-02). */
const NO_SUCH_FILE = 2;
/** Reads are split in requests of this size, this many in flight: like OpenSSH sftp, so a large range streams at link speed. */
const READ_CHUNK = 128 * 1024;
const READS_IN_FLIGHT = 32;
/** From this size on a read is one streamed command instead of SFTP requests. */
const STREAM_MIN = 1024 * 1024;
const WRITE_CHUNK = 64 * 1024;
const WRITES_IN_FLIGHT = 16;
/** OpenSSH's default MaxSessions is 10 channels per connection; one is kept for SFTP. Further commands wait for a slot. */
const MAX_SESSIONS = 8;
const RECONNECT_DELAYS_MS = [0, 500, 1000, 2000];
/** How long the server may take to answer a channel request (exec, SFTP, a forward) before it is given up. */
const SSH_REQUEST_TIMEOUT_MS = 30_000;

/** `~/x` → `x`: SFTP resolves relative paths from the home folder. */
function sftpPath(path: string): string {
  if (path === '~') return '.';
  if (path.startsWith('~/')) return path.slice(2) || '.';
  return path;
}

function kindOf(mode: number): FileStat['kind'] {
  const fmt = mode & 0o170000;
  return fmt === 0o100000 ? 'file' : fmt === 0o040000 ? 'directory' : 'other';
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The script sent over SSH: environment as quoted `export` lines (sshd's AcceptEnv refuses most variables), the working
 * folder, then the command, all in `sh`. The first thing it prints on stderr is its process group, so kill() and timeouts
 * stop everything the command started; the stream hides that line.
 */
function remoteCommand(script: string, opts: { cwd?: string; env?: Record<string, string> } = {}): string {
  return `exec sh -c ${shellQuote(`printf '\\036%s\\n' "$$" >&2\n${scriptWithEnv(script, opts)}`)}`;
}

/**
 * The script after `umask 077` (everything the product makes on a host is the user's alone), quoted `export` lines and
 * the `cd` into its working folder.
 */
function scriptWithEnv(script: string, opts: { cwd?: string; env?: Record<string, string> }): string {
  const lines = ['umask 077'];
  lines.push(
    ...Object.entries(opts.env ?? {}).map(([k, v]) => {
      if (!ENV_NAME.test(k)) throw new Error(`environment variable name "${k}" is not valid (letters, digits and _)`);
      return `export ${k}=${shellQuote(v)}`;
    }),
  );
  // sshd starts in the home folder from the password database; the command starts in $HOME (or cwd) either way.
  lines.push(opts.cwd ? `cd ${shellPath(opts.cwd)} || exit 1` : 'cd "$HOME" 2>/dev/null');
  lines.push(script);
  return lines.join('\n');
}

/**
 * A host reached over SSH: one ssh2 connection (through its ProxyJump hops) shared by exec, SFTP and port forwards,
 * opened on first use, kept alive, and opened again on the next call after a drop (with backoff). Prompts (host key,
 * passphrase, password, 2FA) happen only while connecting, so a refresh never asks anything.
 */
export class SshHost implements Host {
  readonly kind = 'ssh' as const;
  private conn: Promise<Connection> | undefined;
  private current: Connection | undefined;
  private dropped = false;
  private disposed = false;
  private home: string | undefined;
  private readonly counters: HostStats = { bytesRead: 0, roundTrips: 0 };
  private readonly listeners = new Set<(s: SshHostState) => void>();
  private readonly forwards = new Set<PortForward>();
  private stateValue: SshHostState = { state: 'disconnected' };
  private sessions = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly alias: string,
    private readonly ctx: SshContext,
  ) {}

  get state(): SshHostState {
    return this.stateValue;
  }

  onStateChange(listener: (s: SshHostState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private setState(s: SshHostState): void {
    this.stateValue = s;
    for (const l of this.listeners) l(s);
  }

  /** Opens the connection now (the hosts view's Connect); later calls reuse it. */
  async connect(): Promise<void> {
    await this.connection();
  }

  /** Closes the connection; the next call opens a new one. */
  async disconnect(): Promise<void> {
    const c = this.current;
    this.conn = undefined;
    this.current = undefined;
    this.dropped = false;
    if (c) this.close(c, 'disconnected');
    this.setState({ state: 'disconnected' });
  }

  private connection(): Promise<Connection> {
    if (this.disposed) return Promise.reject(new Error(`${this.name}: host was closed`));
    this.conn ??= this.open().catch((err: unknown) => {
      this.conn = undefined;
      throw err;
    });
    return this.conn;
  }

  private async open(): Promise<Connection> {
    this.setState({ state: 'connecting' });
    // After a drop the host may be restarting: try a few times with growing pauses, but never when the user must act.
    const delays = this.dropped ? RECONNECT_DELAYS_MS : [0];
    let lastErr: unknown;
    for (const delay of delays) {
      if (delay) await new Promise((r) => setTimeout(r, delay));
      try {
        const clients = await connectRoute(resolveSshRoute(this.alias, this.ctx.paths), this.ctx);
        const conn: Connection = { clients, client: clients[clients.length - 1]!, inflight: new Set() };
        for (const c of clients) {
          c.on('error', (err: Error) => (conn.lost ??= err.message));
          c.on('close', () => this.onDrop(conn));
        }
        this.current = conn;
        this.dropped = false;
        this.setState({ state: 'connected' });
        return conn;
      } catch (err) {
        lastErr = err;
        if (!(err instanceof SshConnectError) || err.reason !== 'unreachable' || /no SSH answer within/.test(err.message)) break;
      }
    }
    const msg = errorMessage(lastErr);
    const reason = lastErr instanceof SshConnectError ? lastErr.reason : 'unreachable';
    this.setState(reason === 'unreachable' ? { state: 'unreachable', reason: msg } : { state: 'auth-needed', reason: msg });
    throw lastErr;
  }

  private onDrop(conn: Connection): void {
    if (conn.lost === 'disconnected') return;
    const why = conn.lost ?? 'the server closed it';
    this.close(conn, why);
    if (this.current !== conn) return;
    this.current = undefined;
    this.conn = undefined;
    this.dropped = true;
    this.setState({ state: 'disconnected', reason: `connection lost (${why}); reconnects on next use` });
  }

  private close(conn: Connection, why: string): void {
    conn.lost ??= why;
    for (const c of [...conn.clients].reverse()) c.end();
    const fails = [...conn.inflight];
    conn.inflight.clear();
    for (const f of fails) f(new Error(why));
  }

  /** Runs `fn` on the connection; if the connection drops first, fails with HostConnectionLostError. */
  private async track<T>(what: string, fn: (conn: Connection) => Promise<T>): Promise<T> {
    const conn = await this.connection();
    let onLost!: (err: Error) => void;
    const lost = new Promise<never>((_, reject) => {
      onLost = (err) => reject(new HostConnectionLostError(this.name, what, err.message));
    });
    lost.catch(() => undefined);
    conn.inflight.add(onLost);
    try {
      return await Promise.race([fn(conn), lost]);
    } finally {
      conn.inflight.delete(onLost);
    }
  }

  async exec(script: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (opts.batch && opts.stdin === undefined && !opts.signal) {
      const command = scriptWithEnv(script, opts);
      return this.track(`running \`${script.length > 60 ? `${script.slice(0, 60)}…` : script}\``, async (conn) => {
        const shell = await this.batchShell(conn);
        this.counters.roundTrips++;
        return shell.run(command, opts.timeoutMs);
      });
    }
    return collectExec(await this.spawn(script, opts), opts);
  }

  /** The connection's long-lived shell for batch commands, opened on first use (it holds one session slot). */
  private batchShell(conn: Connection): Promise<BatchShell> {
    conn.batch ??= this.openExec(conn, 'umask 077; exec sh', 'opening a shell').then(
      (ch) =>
        new BatchShell(ch, (pgid) =>
          conn.client.exec(`kill -KILL -- -${pgid} 2>/dev/null`, (err, c) => void (err ? undefined : c.resume())),
        ),
    );
    conn.batch.catch(() => (conn.batch = undefined));
    return conn.batch.then((b) => {
      if (b.isOpen) return b;
      conn.batch = undefined;
      return this.batchShell(conn);
    });
  }

  async spawn(script: string, opts: Omit<ExecOptions, 'stdin' | 'timeoutMs'> = {}): Promise<SpawnedProcess> {
    return this.spawnFor(`running \`${script.length > 60 ? `${script.slice(0, 60)}…` : script}\``, script, opts);
  }

  /** spawn, with what the command does for its errors ("connection lost while reading /path", not the script's start). */
  private async spawnFor(what: string, script: string, opts: Omit<ExecOptions, 'stdin' | 'timeoutMs'>): Promise<SpawnedProcess> {
    const command = remoteCommand(script, opts);
    const conn = await this.connection();
    const channel = await this.openExec(conn, command, what);
    const stderr = new PassThrough();
    let pgid: number | undefined;
    let pendingKill: NodeJS.Signals | undefined;
    let head = Buffer.alloc(0);
    channel.stderr.on('data', (d: Buffer) => {
      if (pgid !== undefined) return void stderr.write(d);
      head = Buffer.concat([head, d]);
      const nl = head.indexOf(10);
      if (nl < 0) return;
      const m = /^\x1e(\d+)$/.exec(head.subarray(0, nl).toString('latin1'));
      pgid = m ? Number(m[1]) : -1;
      const rest = m ? head.subarray(nl + 1) : head;
      if (rest.length) stderr.write(rest);
      if (pendingKill) kill(pendingKill);
    });
    channel.stderr.on('end', () => {
      if (pgid === undefined && head.length) stderr.write(head);
      stderr.end();
    });
    const kill = (sig: NodeJS.Signals = 'SIGTERM') => {
      if (exitInfo) return;
      if (pgid === undefined) return void (pendingKill = sig);
      if (pgid > 0) {
        // Another channel on the same connection: signal the whole process group the command started.
        conn.client.exec(`kill -${sig.replace(/^SIG/, '')} -- -${pgid} 2>/dev/null`, (err, ch) => {
          if (!err) ch.resume().on('close', () => undefined);
        });
      } else channel.signal(sig.replace(/^SIG/, ''));
    };
    let exitInfo: { code: number | null; signal: string | null } | undefined;
    channel.on('exit', (code: number | null, signal?: string) => {
      exitInfo = { code: signal ? null : code, signal: signal ? `SIG${signal}` : null };
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
      const onLost = (err: Error) => reject(new HostConnectionLostError(this.name, what, err.message));
      conn.inflight.add(onLost);
      // ssh2 also passes the exit status to 'close': the 'exit' event can fire before this listener exists, when the whole
      // reply of a quick command arrives in the same packet batch as the exec confirmation.
      channel.on('close', (code?: number | null, signal?: string) => {
        conn.inflight.delete(onLost);
        exitInfo ??= typeof code === 'number' ? { code, signal: null } : signal ? { code: null, signal } : undefined;
        if (exitInfo) resolve(exitInfo);
        else if (conn.lost) onLost(new Error(conn.lost));
        else resolve({ code: null, signal: null });
      });
    });
    opts.signal?.addEventListener('abort', () => kill('SIGTERM'), { once: true });
    return { stdin: channel, stdout: channel, stderr, exited, kill };
  }

  /**
   * An exec channel, within the server's session limit. sshd frees a session slot a moment after the channel closes
   * ("no more sessions"), so a refused open is tried again shortly.
   */
  private async openExec(conn: Connection, command: string, what: string): Promise<ClientChannel> {
    for (let attempt = 1; ; attempt++) {
      await this.acquireSession();
      try {
        const channel = await this.answered<ClientChannel>(
          `opening a channel for ${what}`,
          (cb) => conn.client.exec(command, cb),
          (ch) => ch.close(),
        );
        channel.once('close', () => this.releaseSession());
        this.counters.roundTrips++;
        return channel;
      } catch (err) {
        this.releaseSession();
        if (conn.lost) throw new HostConnectionLostError(this.name, what, conn.lost);
        if (err instanceof SshRequestTimeoutError) throw err;
        if (attempt >= 20 || !/open failed/.test((err as Error).message))
          throw new Error(`${this.name}: cannot start a command: ${errorMessage(err)}`);
        await new Promise((r) => setTimeout(r, 10 * attempt));
      }
    }
  }

  /**
   * The server's answer to a channel request, within `requestTimeoutMs`: a server that stops answering fails the call
   * with the host and the stage named, and a channel that opens after that is closed.
   */
  private answered<T>(
    stage: string,
    request: (cb: (err: Error | undefined, value: T) => void) => void,
    discard: (late: T) => void,
  ): Promise<T> {
    const ms = this.ctx.requestTimeoutMs ?? SSH_REQUEST_TIMEOUT_MS;
    return answerWithin(ms, request, discard, () => new SshRequestTimeoutError(this.name, stage, ms));
  }

  private async acquireSession(): Promise<void> {
    if (this.sessions < MAX_SESSIONS) {
      this.sessions++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot straight to the next waiting command, or frees it. */
  private releaseSession(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.sessions--;
  }

  private sftp(conn: Connection): Promise<SFTPWrapper> {
    conn.sftp ??= this.answered<SFTPWrapper>(
      'opening an SFTP channel',
      (cb) => conn.client.sftp(cb),
      (late) => late.end(),
    ).then((s) => {
      s.on('close', () => (conn.sftp = undefined));
      return s;
    });
    conn.sftp.catch(() => (conn.sftp = undefined));
    return conn.sftp;
  }

  private notFound(path: string) {
    return (err: Error & { code?: number }) => {
      throw err.code === NO_SUCH_FILE ? new HostFileNotFoundError(this.name, path) : new Error(`${this.name}: ${path}: ${err.message}`);
    };
  }

  /** One SFTP request, counted, as a promise. */
  private req<T>(fn: (cb: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> {
    this.counters.roundTrips++;
    return new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));
  }

  async readFile(path: string, range?: ReadRange): Promise<Buffer> {
    const start = range?.start ?? 0;
    const into = range?.into;
    if (range?.end !== undefined && range.end - start >= STREAM_MIN) return this.readStream(path, start, range.end, into);
    return this.track(`reading ${path}`, async (conn) => {
      const sftp = await this.sftp(conn);
      const handle = await this.req<Buffer>((cb) => sftp.open(sftpPath(path), 'r', cb)).catch(this.notFound(path));
      let end = range?.end;
      try {
        if (end === undefined) {
          end = (await this.req<Stats>((cb) => sftp.fstat(handle, cb))).size;
          if (end - start >= STREAM_MIN) return undefined;
        }
        return await this.readSftp(sftp, handle, start, end, into);
      } finally {
        sftp.close(handle, () => undefined);
      }
    }).then((buf) => buf ?? this.readStream(path, start));
  }

  /** Small ranges over SFTP: many read requests in flight at once, each into its place in the buffer. */
  private async readSftp(sftp: SFTPWrapper, handle: Buffer, start: number, end: number, into: Buffer | undefined): Promise<Buffer> {
    const total = Math.max(0, end - start);
    const buf = rangeBuffer(total, into);
    let next = 0;
    let eof = total;
    const worker = async () => {
      while (next < eof) {
        const off = next;
        const len = Math.min(READ_CHUNK, eof - off);
        next += len;
        let got = 0;
        while (got < len && off + got < eof) {
          const n = await this.req<number>((cb) =>
            sftp.read(handle, buf, off + got, len - got, start + off + got, (err, bytes) => cb(err, bytes)),
          );
          if (n === 0) {
            eof = Math.min(eof, off + got);
            break;
          }
          got += n;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, Math.ceil(total / READ_CHUNK)) }, worker));
    this.counters.bytesRead += eof;
    return eof === total ? buf : buf.subarray(0, eof);
  }

  /** Large ranges in one piece, from the stream below (into the caller's buffer when it has room). */
  private async readStream(path: string, start: number, end?: number, into?: Buffer): Promise<Buffer> {
    if (into && end !== undefined && into.length >= end - start) {
      let n = 0;
      for await (const c of this.readChunks(path, { start, end })) n += c.copy(into, n);
      return into.subarray(0, n);
    }
    const chunks: Buffer[] = [];
    for await (const c of this.readChunks(path, { start, end })) chunks.push(c);
    return Buffer.concat(chunks);
  }

  /**
   * A file's bytes as one stream (`cat` after a seek, `| head -c LEN` for a range, in a command) rather than SFTP read
   * requests: ssh2's SFTP costs a request and a callback per chunk and reaches about a third of the channel's throughput,
   * a plain stream all of it.
   */
  async *readChunks(path: string, opts: { start?: number; end?: number; signal?: AbortSignal } = {}): AsyncGenerator<Buffer> {
    const start = opts.start ?? 0;
    const limit = opts.end === undefined ? '' : ` | head -c ${Math.max(0, opts.end - start)}`;
    // dd only seeks the shared descriptor (count=0) and cat copies in 128 KiB pieces; `tail -c +N` would copy 8 KiB at a time.
    const seek = start > 0 ? `dd bs=1 skip=${start} count=0 2>/dev/null; ` : '';
    const proc = await this.spawnFor(
      `reading ${path}`,
      `f=${shellPath(path)}; [ -f "$f" ] || { echo "no such file" >&2; exit 44; }; { ${seek}cat; } < "$f"${limit}`,
      { signal: opts.signal },
    );
    proc.stdin.end();
    const err: Buffer[] = [];
    proc.stderr.on('data', (d: Buffer) => err.push(d));
    proc.exited.catch(() => undefined); // awaited below; a drop mid-stream surfaces there
    let complete = false;
    try {
      for await (const chunk of proc.stdout as AsyncIterable<Buffer>) {
        this.counters.bytesRead += chunk.length;
        yield chunk;
      }
      complete = true;
    } catch (e) {
      await proc.exited; // the connection dropped: HostConnectionLostError rather than a premature close
      throw e;
    } finally {
      if (!complete) proc.kill('SIGTERM'); // the reader stopped early
    }
    const { code } = await proc.exited;
    opts.signal?.throwIfAborted();
    if (code === 44) throw new HostFileNotFoundError(this.name, path);
    if (code !== 0) throw new Error(`${this.name}: reading ${path} failed (exit ${code}): ${Buffer.concat(err).toString().trim()}`);
  }

  async writeFile(path: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
    await this.track(`writing ${path}`, async (conn) => {
      const sftp = await this.sftp(conn);
      const p = sftpPath(path);
      const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      const mode = privateFileMode(opts.mode);
      const openFile = () => this.req<Buffer>((cb) => sftp.open(p, 'w', { mode }, cb));
      const handle = await openFile().catch(async (err: Error & { code?: number }) => {
        if (err.code !== NO_SUCH_FILE) throw new Error(`${this.name}: ${path}: ${err.message}`);
        await this.sftpMkdirp(sftp, posix.dirname(p));
        return openFile();
      });
      try {
        let next = 0;
        const worker = async () => {
          while (next < bytes.length) {
            const off = next;
            const len = Math.min(WRITE_CHUNK, bytes.length - off);
            next += len;
            await this.req<void>((cb) => sftp.write(handle, bytes, off, len, off, cb));
          }
        };
        await Promise.all(Array.from({ length: Math.min(WRITES_IN_FLIGHT, Math.ceil(bytes.length / WRITE_CHUNK)) }, worker));
        await this.req<void>((cb) => sftp.fchmod(handle, mode, cb)); // a file that existed keeps its mode on open
      } finally {
        await this.req<void>((cb) => sftp.close(handle, cb));
      }
    });
  }

  private async sftpMkdirp(sftp: SFTPWrapper, dir: string): Promise<void> {
    if (dir === '.' || dir === '/' || dir === '') return;
    const exists = await this.req<Stats>((cb) => sftp.stat(dir, cb)).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (exists) return;
    await this.sftpMkdirp(sftp, posix.dirname(dir));
    await this.req<void>((cb) => sftp.mkdir(dir, { mode: PRIVATE_DIR_MODE }, cb)).catch(async (err: Error) => {
      // Another writer may have made it in between.
      const made = await this.req<Stats>((cb) => sftp.stat(dir, cb)).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!made) throw new Error(`${this.name}: cannot create ${dir}: ${err.message}`);
    });
  }

  async stat(path: string): Promise<FileStat> {
    return this.track(`reading ${path}`, async (conn) => {
      const sftp = await this.sftp(conn);
      const s = await this.req<Stats>((cb) => sftp.stat(sftpPath(path), cb)).catch(this.notFound(path));
      return { size: s.size, mtimeMs: s.mtime * 1000, kind: kindOf(s.mode) };
    });
  }

  async readdir(path: string): Promise<DirEntry[]> {
    return this.track(`listing ${path}`, async (conn) => {
      const sftp = await this.sftp(conn);
      const dir = sftpPath(path);
      const list = await this.req<{ filename: string; attrs: Stats }[]>((cb) => sftp.readdir(dir, cb)).catch(this.notFound(path));
      const out = await Promise.all(
        list
          .filter((e) => e.filename !== '.' && e.filename !== '..')
          .map(async (e): Promise<DirEntry | undefined> => {
            let attrs = e.attrs;
            // readdir reports links themselves; follow them like LocalHost does (a dangling link is left out).
            if ((attrs.mode & 0o170000) === 0o120000) {
              const followed = await this.req<Stats>((cb) => sftp.stat(posix.join(dir, e.filename), cb)).catch(() => undefined);
              if (!followed) return undefined;
              attrs = followed;
            }
            return { name: e.filename, size: attrs.size, mtimeMs: attrs.mtime * 1000, kind: kindOf(attrs.mode) };
          }),
      );
      return out.filter((e): e is DirEntry => e !== undefined).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  }

  async mkdir(path: string): Promise<void> {
    await execChecked(this, `mkdir -p -- ${shellPath(path)}`);
  }

  async remove(path: string): Promise<void> {
    await execChecked(this, `rm -rf -- ${shellPath(path)}`);
  }

  async resolvePath(path: string): Promise<string> {
    if (path.startsWith('/')) return path;
    this.home ??= await this.track('resolving ~', async (conn) => {
      const sftp = await this.sftp(conn);
      return this.req<string>((cb) => sftp.realpath('.', cb));
    });
    return path === '~' ? this.home : posix.join(this.home, path.startsWith('~/') ? path.slice(2) : path);
  }

  async forwardPort(remotePort: number, remoteHost = '127.0.0.1'): Promise<PortForward> {
    await this.connection();
    const sockets = new Set<Socket>();
    const server = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => sock.destroy());
      // Each new TCP connection uses the host's current connection, so a forward survives a reconnect.
      this.connection()
        .then((conn) =>
          this.answered<ClientChannel>(
            `forwarding to ${remoteHost}:${remotePort}`,
            (cb) => conn.client.forwardOut('127.0.0.1', sock.remotePort ?? 0, remoteHost, remotePort, cb),
            (late) => late.close(),
          ),
        )
        .then(
          (ch) => {
            sock.pipe(ch).pipe(sock);
            ch.on('close', () => sock.destroy());
          },
          () => sock.destroy(),
        );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    const forward: PortForward = {
      localPort: typeof addr === 'object' && addr ? addr.port : 0,
      close: async () => {
        this.forwards.delete(forward);
        for (const s of sockets) s.destroy();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
    this.forwards.add(forward);
    return forward;
  }

  stats(): HostStats {
    return { ...this.counters };
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.forwards].map((f) => f.close()));
    await this.disconnect();
    this.disposed = true;
    this.listeners.clear();
  }
}
