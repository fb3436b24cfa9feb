import type { ResolvedHost } from '../config/workspace-config';
import type { Host } from '../remote/host';
import type { JudgeCallOptions } from '../judge/judge-client';
import { judgeSamples, type JudgeScorer } from '../judge/judge-scorer';
import { RewardRunner } from './reward-runner';
import { functionOn, harnessOn } from './staging';
import type { RewardSample, ScoreResult } from '../scoring/sample';
import type { FunctionInfo } from './types';

interface RunOptions extends JudgeCallOptions {
  onResult?: (r: ScoreResult) => void;
}

/** Something that scores samples: a reward function (in its worker) or a judge. */
export interface Scorer {
  readonly label: string;
  run(samples: RewardSample[], opts?: RunOptions): Promise<ScoreResult[]>;
  dispose(): void;
}

/** `FILE.py` or `FILE.py:NAME`. */
export function parseFunctionSpec(spec: string): { path: string; name?: string } {
  const m = /^(.*\.py):([A-Za-z_]\w*)$/.exec(spec);
  if (m) return { path: m[1]!, name: m[2] };
  if (!spec.endsWith('.py')) throw new Error(`"${spec}" is not a Python file (FILE.py or FILE.py:NAME)`);
  return { path: spec };
}

interface FunctionScorerOptions {
  host: Host;
  /** The host's medrl.yaml entry: its workdir and setup lines are used for the worker. */
  hostEntry?: ResolvedHost;
  /** The function's file here (the workspace); copied to a remote host and kept up to date there. */
  localPath: string;
  name?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  workers?: number;
  batchSize?: number;
  log?: (line: string) => void;
}

export class FunctionScorer implements Scorer {
  readonly label: string;
  private runner: RewardRunner | undefined;

  constructor(private readonly opts: FunctionScorerOptions) {
    this.label = `${opts.localPath}${opts.name ? `:${opts.name}` : ''}${opts.host.kind === 'local' ? '' : ` on ${opts.host.name}`}`;
  }

  private async ready(): Promise<RewardRunner> {
    const o = this.opts;
    // On a remote host the copy is refreshed first; the worker then reloads it by its mtime.
    const fnPath = await functionOn(o.host, o.localPath);
    if (!this.runner) {
      this.runner = new RewardRunner({
        host: o.host,
        harnessPath: await harnessOn(o.host),
        fnPath,
        name: o.name,
        env: o.env,
        cwd: o.host.kind === 'local' ? undefined : o.hostEntry?.workdir,
        setup: o.host.kind === 'local' ? undefined : o.hostEntry?.setup,
        timeoutMs: o.timeoutMs ?? 30_000,
        workers: o.workers,
        batchSize: o.batchSize,
        log: o.log,
      });
    }
    return this.runner;
  }

  async info(): Promise<FunctionInfo> {
    return (await this.ready()).info();
  }

  async run(samples: RewardSample[], opts: RunOptions = {}): Promise<ScoreResult[]> {
    return (await this.ready()).run(samples, opts);
  }

  /** Scores samples as they are read, results in input order, in bounded memory (RewardRunner.stream). */
  async *stream(samples: AsyncIterable<RewardSample>, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ScoreResult> {
    yield* (await this.ready()).stream(samples, opts);
  }

  dispose(): void {
    this.runner?.dispose();
    this.runner = undefined;
  }
}

export class JudgeSamplesScorer implements Scorer {
  constructor(
    readonly label: string,
    private readonly judge: JudgeScorer,
  ) {}

  run(samples: RewardSample[], opts: RunOptions = {}): Promise<ScoreResult[]> {
    return judgeSamples(this.judge, samples, opts);
  }

  dispose(): void {}
}
