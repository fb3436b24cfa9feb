import type { Readable } from 'node:stream';
import type { Host, SpawnedProcess } from '../remote/host';
import { shellJoin, shellPath } from '../remote/shell-quote';
import { decodeMarshal, encodeMarshal } from './py-marshal';
import type { RewardSample, ScoreResult } from '../scoring/sample';
import type { FunctionInfo } from './types';
import { errorMessage } from '../errors/located-error';

export interface WorkerOptions {
  host: Host;
  /** The harness (python/reward_worker.py) on the host. */
  harnessPath: string;
  /** The reward function's file on the host. */
  fnPath: string;
  /** The function's name; omitted: `compute_score`, else the file's only reward function. */
  name?: string;
  /** Environment for the function (judge URL, model, key): sent over stdin, never on a command line. */
  env?: Record<string, string>;
  cwd?: string;
  /** Shell lines run first on the host (e.g. activating the training environment). */
  setup?: string[];
  python?: string;
  /** Per-call timeout. */
  timeoutMs: number;
  /** How long past the timeout a call may go before the worker is killed (the alarm inside Python could not stop it). */
  graceMs?: number;
  log?: (line: string) => void;
}

/** One results frame: a run of consecutive samples' results as columns; `notes` only for samples with an error or output. */
interface WireResults {
  id: number;
  from: number;
  score: Array<number | null>;
  detail: Array<Record<string, unknown> | null>;
  seconds: number[];
  /** [k within this frame, error, traceback, stdout, stderr] */
  notes: Array<[number, string | null, string | null, string, string]>;
  /** Set here (not on the wire) when the frame held a NaN or an infinity. */
  nonFinite?: boolean;
}

interface WireLoaded {
  type: 'loaded';
  ok: boolean;
  name?: string;
  kind?: 'verl' | 'trl';
  params?: string[];
  required?: string[];
  var_kw?: boolean;
  is_async?: boolean;
  error?: string;
  traceback?: string;
}

/**
 * How a batch ended: every sample answered, or the worker hung or died (it is gone then) after answering `stoppedAt`
 * samples. Outside `careful` mode answers come in chunks, so the culprit is sample `stoppedAt` or a later one.
 */
interface BatchOutcome {
  results: ScoreResult[];
  stoppedAt?: number;
  why?: string;
  /** From the last answer (or the batch's start) to the stop: the stopped call's time, when it is known which call it was. */
  stoppedAfterMs?: number;
}

const STDERR_TAIL = 8192;
/** Samples per `run` frame: small enough that the worker starts on the first while the rest are encoded and sent. */
const PART = 256;

/**
 * One persistent `python3` process running one reward function (python/reward_worker.py): a batch of samples goes as a
 * stream of marshal frames over stdin, results come back in frames as they are made (see the harness's docstring for
 * the wire). The worker reloads the file itself when its mtime changes.
 */
export class RewardWorker {
  private proc: SpawnedProcess | undefined;
  private frames: FrameReader | undefined;
  private nextId = 1;
  private stderrTail = '';
  private exitInfo: string | undefined;
  info: FunctionInfo | undefined;
  /** Called when the worker reloads the function (the file changed). */
  onReload?: (info: FunctionInfo) => void;

  constructor(private readonly opts: WorkerOptions) {}

  get alive(): boolean {
    return this.proc !== undefined && this.exitInfo === undefined;
  }

  async start(): Promise<FunctionInfo> {
    const o = this.opts;
    const script = [
      ...(o.cwd ? [`cd ${shellPath(o.cwd)}`] : []),
      ...(o.setup ?? []),
      `exec ${shellJoin([o.python ?? 'python3', '-u'])} ${shellPath(o.harnessPath)}`,
    ].join(' && ');
    this.exitInfo = undefined;
    this.stderrTail = '';
    const proc = await o.host.spawn(script, { env: { PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' } });
    this.proc = proc;
    proc.stdin.on('error', () => {
      // the worker died: its exit is reported through `exited`
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-STDERR_TAIL);
      for (const line of d.split('\n')) if (line.trim()) o.log?.(`reward worker ${o.fnPath}: ${line}`);
    });
    // A lost SSH connection rejects `exited`: the worker is gone then too, and the next batch starts a new one.
    void proc.exited.then(
      ({ code, signal }) => {
        if (this.proc === proc) this.exitInfo = signal ? `killed by ${signal}` : `exited with code ${code}`;
      },
      (err: unknown) => {
        if (this.proc === proc) this.exitInfo = `lost (${errorMessage(err)})`;
      },
    );
    this.frames = new FrameReader(proc.stdout, (line) => o.log?.(`reward worker ${o.fnPath}: not a protocol line: ${line.slice(0, 200)}`));
    this.send({ path: o.fnPath, name: o.name ?? null, env: o.env ?? {} });
    const first = await this.nextMessage(30_000 + (o.graceMs ?? 0));
    if (!first || first.type !== 'loaded') {
      const why = first ? `unexpected first message ${JSON.stringify(first).slice(0, 200)}` : (this.frames.problem ?? this.deathNote());
      this.kill();
      throw new Error(`${o.host.name}: the reward worker for ${o.fnPath} did not start: ${why}`);
    }
    this.info = this.toInfo(first as unknown as WireLoaded);
    return this.info;
  }

  /** Scores one batch. Results arrive through `onResult` as they are made. A cancelled batch kills the worker. */
  async runBatch(
    samples: RewardSample[],
    opts: { signal?: AbortSignal; careful?: boolean; onResult?: (i: number, r: ScoreResult) => void } = {},
  ): Promise<BatchOutcome> {
    if (!this.alive) await this.start();
    const id = this.nextId++;
    const timeoutMs = this.opts.timeoutMs;
    // All parts are written now, without waiting: the worker scores one while the next is still being encoded.
    const timeout = timeoutMs / 1000;
    const careful = opts.careful ?? false;
    for (let from = 0; from < samples.length; from += PART) {
      this.send({ type: 'run', id, from, timeout, careful, columns: columnsOf(samples.slice(from, from + PART)) });
    }
    const results: ScoreResult[] = [];
    const watchdog = timeoutMs + (this.opts.graceMs ?? 3000);
    let lastAnswer = Date.now();
    while (results.length < samples.length) {
      if (opts.signal?.aborted) {
        this.kill();
        return { results, stoppedAt: results.length, why: 'cancelled' };
      }
      const msg = await this.nextMessage(watchdog, opts.signal);
      if (msg === undefined) {
        if (opts.signal?.aborted) {
          this.kill();
          return { results, stoppedAt: results.length, why: 'cancelled' };
        }
        const stoppedAfterMs = Date.now() - lastAnswer;
        let why = this.frames?.problem;
        if (!why && (this.frames?.closed || this.exitInfo !== undefined)) {
          // It ended before the watchdog fired: it died (os._exit, a signal, a segfault), and how (code, signal) comes
          // with the exit a moment after its stdout closes. A lost connection rejects `exited`; start()'s handler records that.
          if (this.exitInfo === undefined)
            await Promise.race([this.proc!.exited.catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
          why = this.exitInfo?.startsWith('lost')
            ? `the connection to the reward worker was ${this.deathNote()} during this call; it was restarted`
            : `the reward worker crashed during this call (${this.deathNote()}); it was restarted`;
        }
        why ??= `timed out after ${timeoutMs / 1000} s (the call could not be interrupted: the worker was killed and restarted)`;
        this.kill();
        return { results, stoppedAt: results.length, why, stoppedAfterMs };
      }
      lastAnswer = Date.now();
      const m = msg as unknown as Partial<WireResults> & Partial<WireLoaded> & { type?: string };
      if (m.type === 'loaded') {
        this.info = this.toInfo(m as WireLoaded);
        this.onReload?.(this.info);
        continue;
      }
      if (m.id !== id) continue;
      this.take(m as WireResults, results, opts.onResult);
    }
    return { results };
  }

  /** Turns a results frame into ScoreResults (in order, indexes within the batch). */
  private take(m: WireResults, results: ScoreResult[], onResult?: (i: number, r: ScoreResult) => void): void {
    const notes = m.notes.length ? new Map(m.notes.map((n) => [n[0], n])) : undefined;
    for (let k = 0; k < m.score.length; k++) {
      const note = notes?.get(k);
      const index = m.from + k;
      const result: ScoreResult = {
        index,
        score: m.score[k]!,
        detail: m.detail[k]!,
        error: note?.[1] ?? null,
        traceback: note?.[2] ?? null,
        stdout: note?.[3] ?? '',
        stderr: note?.[4] ?? '',
        latencyMs: m.seconds[k]! * 1000,
      };
      if (m.nonFinite && result.detail && hasNonFinite(result.detail)) {
        result.score = null;
        result.error = 'returned a dict holding NaN or an infinity (JSON cannot hold it)';
        result.detail = null;
      }
      results.push(result);
      onResult?.(index, result);
    }
  }

  private send(message: unknown): void {
    this.proc!.stdin.write(encodeMarshal(message, { framed: true }));
  }

  kill(): void {
    this.proc?.kill('SIGKILL');
    this.exitInfo ??= 'killed';
  }

  private deathNote(): string {
    const tail = this.stderrTail.trim().split('\n').slice(-5).join('\n');
    return `${this.exitInfo ?? 'its output closed; exit status unknown'}${tail ? `: ${tail}` : ''}`;
  }

  private toInfo(m: WireLoaded): FunctionInfo {
    return {
      ok: m.ok,
      path: this.opts.fnPath,
      name: m.name,
      kind: m.kind,
      params: m.params,
      required: m.required,
      varKw: m.var_kw,
      isAsync: m.is_async,
      error: m.error,
      traceback: m.traceback,
    };
  }

  /** The next message, or undefined when the worker ends, `ms` pass with nothing, or the signal fires. */
  private async nextMessage(ms: number, signal?: AbortSignal): Promise<Message | undefined> {
    // Frames often arrive several to a read: those are taken without a timer.
    const ready = this.frames!.take();
    if (ready) return ready;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
      onAbort = () => resolve(undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.frames!.next(), stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** A decoded frame from the worker; `nonFinite` is set here when it held a NaN or an infinity. */
type Message = Record<string, unknown> & { nonFinite?: boolean };

/** Samples as the worker's columns; `prompt` and `extra` only when some sample has them (the fast path needs neither). */
function columnsOf(samples: RewardSample[]): Record<string, unknown[]> {
  const columns: Record<string, unknown[]> = {
    data_source: samples.map((s) => s.data_source),
    solution_str: samples.map((s) => s.solution_str),
    ground_truth: samples.map((s) => s.ground_truth),
    extra_info: samples.map((s) => s.extra_info ?? null),
  };
  if (samples.some((s) => s.prompt !== undefined)) columns.prompt = samples.map((s) => s.prompt ?? null);
  if (samples.some((s) => s.extra && Object.keys(s.extra).length)) columns.extra = samples.map((s) => s.extra ?? {});
  return columns;
}

function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value && typeof value === 'object') return Object.values(value).some(hasNonFinite);
  return false;
}

const MAGIC = Buffer.from('MEDRL-REWARD-WORKER-1\n');

/**
 * The worker's stdout as messages: text before the harness's magic line (a setup line or a shell profile that printed)
 * is reported line by line, then length-prefixed marshal frames, decoded as they arrive.
 */
class FrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private started = false;
  private ended = false;
  private readonly ready: Array<Message> = [];
  private waiter: ((m: Message | undefined) => void) | undefined;
  /** Why the stream stopped being readable (a frame that does not decode); it ends then. */
  problem: string | undefined;

  constructor(
    stream: Readable,
    private readonly junk: (line: string) => void,
  ) {
    stream.on('data', (chunk: Buffer) => this.feed(chunk));
    stream.on('end', () => this.finish());
    stream.on('close', () => this.finish());
  }

  /** The stream ended (the worker closed its stdout or exited). */
  get closed(): boolean {
    return this.ended;
  }

  /** A message already read, if there is one. */
  take(): Message | undefined {
    return this.ready.shift();
  }

  next(): Promise<Message | undefined> {
    const m = this.ready.shift();
    if (m || this.ended) return Promise.resolve(m);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (!w || (!this.ready.length && !this.ended)) return;
    this.waiter = undefined;
    w(this.ready.shift());
  }

  private feed(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.parse(chunk);
    } catch (err) {
      this.problem = `the reward worker sent a frame that cannot be read (${errorMessage(err)}): the worker was killed and restarted`;
      this.finish();
    }
  }

  private parse(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    if (!this.started) {
      const at = this.pending.indexOf(MAGIC);
      const before = (at < 0 ? this.pending.subarray(0, this.pending.lastIndexOf(10) + 1) : this.pending.subarray(0, at)).toString('utf8');
      for (const line of before.split('\n')) if (line.trim()) this.junk(line);
      if (at < 0) {
        this.pending = this.pending.subarray(this.pending.lastIndexOf(10) + 1);
        return;
      }
      this.started = true;
      this.pending = this.pending.subarray(at + MAGIC.length);
    }
    let pos = 0;
    while (this.pending.length - pos >= 4) {
      const size = this.pending.readUInt32LE(pos);
      if (this.pending.length - pos - 4 < size) break;
      const { value, nonFinite } = decodeMarshal(this.pending.subarray(pos + 4, pos + 4 + size));
      pos += 4 + size;
      if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
      this.ready.push(nonFinite ? { ...(value as Record<string, unknown>), nonFinite } : (value as Record<string, unknown>));
    }
    this.pending = this.pending.subarray(pos);
    this.wake();
  }
}
