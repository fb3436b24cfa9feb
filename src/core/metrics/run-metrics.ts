import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { HostFileNotFoundError } from '../remote/host';
import { MetricSeries } from './metric-series';
import { MetricsFollower, type PollOptions, type PollResult, type SplitOptions } from './metrics-follower';
import type { Problem } from '../errors/located-error';
import type { Framework } from './metric-log-parser';
import { errorMessage } from '../errors/located-error';
import type { MetricsCache } from './metrics-cache';

/** A run folder on a host (the runs feature's contract): where its metrics are. */
export interface RunRef {
  host: string;
  dir: string;
  framework?: Framework;
}

async function exists(host: Host, path: string): Promise<boolean> {
  try {
    await host.stat(path);
    return true;
  } catch (err) {
    if (err instanceof HostFileNotFoundError) return false;
    throw err;
  }
}

/** The run's framework: given, else `run.json`'s, else undefined (the log's format decides). */
async function runFramework(host: Host, run: RunRef): Promise<Framework | undefined> {
  if (run.framework) return run.framework;
  const file = posix.join(run.dir, 'run.json');
  if (!(await exists(host, file))) return undefined;
  const text = (await host.readFile(file)).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${host.name}:${file}: not valid JSON (${errorMessage(err)})`);
  }
  const fw = (json as { framework?: unknown }).framework;
  return fw === 'verl' || fw === 'trl' ? fw : undefined;
}

/** The newest `output/checkpoint-N/trainer_state.json` of a TRL run, if any. */
async function latestTrainerState(host: Host, dir: string): Promise<string | undefined> {
  const out = posix.join(dir, 'output');
  if (!(await exists(host, out))) return undefined;
  const ckpts = (await host.readdir(out))
    .map((e) => ({ e, n: /^checkpoint-(\d+)$/.exec(e.name) }))
    .filter((x) => x.e.kind === 'directory' && x.n)
    .sort((a, b) => Number(b.n![1]) - Number(a.n![1]));
  for (const c of ckpts) {
    const f = posix.join(out, c.e.name, 'trainer_state.json');
    if (await exists(host, f)) return f;
  }
  return undefined;
}

/**
 * Where a run's metrics are, best first: verl's `metrics.jsonl` (exact numbers, one record per step), else `output.log`;
 * TRL's `output.log`, else the newest `trainer_state.json`. Undefined when the run has written none yet.
 */
export async function locateRunMetrics(host: Host, run: RunRef): Promise<{ path: string; framework: Framework | undefined } | undefined> {
  const framework = await runFramework(host, run);
  const jsonl = posix.join(run.dir, 'metrics.jsonl');
  const log = posix.join(run.dir, 'output.log');
  if (framework !== 'trl' && (await exists(host, jsonl))) return { path: jsonl, framework: 'verl' };
  if (await exists(host, log)) return { path: log, framework };
  if (framework !== 'verl') {
    const state = await latestTrainerState(host, run.dir);
    if (state) return { path: state, framework: 'trl' };
  }
  return undefined;
}

/**
 * A run's metrics, followed: each poll finds the best source (it can change: verl writes metrics.jsonl at its first
 * step, after output.log exists) and reads what is new into one MetricSeries.
 */
export class RunMetrics {
  readonly series: MetricSeries;
  private follower: MetricsFollower | undefined;
  framework: Framework | undefined;

  constructor(
    readonly host: Host,
    readonly run: RunRef,
    private readonly cache?: MetricsCache,
    private readonly split?: SplitOptions,
  ) {
    this.series = new MetricSeries();
    this.framework = run.framework;
  }

  /** The file metrics come from (undefined until the run writes one). */
  get source(): string | undefined {
    return this.follower?.path;
  }

  get current(): MetricsFollower | undefined {
    return this.follower;
  }

  async poll(opts: PollOptions = {}): Promise<PollResult> {
    // Once on the best source there is nothing better to look for: polls then cost one stat and one range read.
    if (!this.follower || !this.follower.path.endsWith(this.framework === 'trl' ? '/output.log' : '/metrics.jsonl')) {
      const where = await locateRunMetrics(this.host, { ...this.run, framework: this.framework });
      if (!where) return { steps: 0, restarted: false, more: false };
      this.framework ??= where.framework;
      if (where.path !== this.follower?.path)
        this.follower = new MetricsFollower(this.host, where.path, this.series, this.cache, { split: this.split });
    }
    const r = await this.follower.poll(opts);
    this.framework ??= this.follower.framework;
    return r;
  }

  async problems(): Promise<Problem[]> {
    return this.follower ? this.follower.problems() : [];
  }

  notes(): string[] {
    return this.follower ? this.follower.notes() : [];
  }

  /** The run has ended: its job wrote `exit_code` (the runs feature's contract). */
  async ended(): Promise<boolean> {
    return exists(this.host, posix.join(this.run.dir, 'exit_code'));
  }
}

/** What the dashboard and the CLI follow: a run folder or one metrics file (any verl/TRL log, JSONL or trainer_state.json). */
export interface MetricsSource {
  readonly series: MetricSeries;
  readonly framework: Framework | undefined;
  /** The file read (undefined while a run has written none). */
  readonly source: string | undefined;
  poll(opts?: PollOptions): Promise<PollResult>;
  problems(): Promise<Problem[]>;
  /** What the user should know that is no fault of the file: metrics logged as None, one line per metric. */
  notes(): string[];
  /** A run that has ended needs no more polling; a bare file may always grow. */
  ended?(): Promise<boolean>;
}

/**
 * A run folder (when `path` is a folder) or a single metrics file on a host. With a cache, a big log read before is
 * taken from it and read on from where that read stopped. With `split`, the first read of a big local log is split
 * over worker threads.
 */
export async function openMetricsSource(
  host: Host,
  path: string,
  opts: { framework?: Framework; cache?: MetricsCache; split?: SplitOptions } = {},
): Promise<MetricsSource> {
  const st = await host.stat(path);
  if (st.kind === 'directory')
    return new RunMetrics(host, { host: host.name, dir: path, framework: opts.framework }, opts.cache, opts.split);
  return new MetricsFollower(host, path, new MetricSeries(), opts.cache, { split: opts.split });
}
