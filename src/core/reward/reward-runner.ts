import { RewardWorker, type WorkerOptions } from './reward-worker';
import type { FunctionInfo, RewardSample, ScoreResult } from './types';

export interface RunnerOptions extends WorkerOptions {
  /** Worker processes for this function (calls that wait on a judge overlap across them). Default 1. */
  workers?: number;
  /** Samples per batch given to a worker (streamed to it in parts; the unit a hang or crash is recovered in). Default 8192. */
  batchSize?: number;
}

export interface RunCallbacks {
  signal?: AbortSignal;
  onResult?: (r: ScoreResult) => void;
}

/**
 * Runs one reward function over many samples with a few persistent workers. Results keep the input order; every sample
 * gets a result (a score or an error), including those a hang, a crashed worker or a cancel stopped.
 */
export class RewardRunner {
  private readonly workers: RewardWorker[];

  constructor(private readonly opts: RunnerOptions) {
    this.workers = Array.from({ length: Math.max(1, opts.workers ?? 1) }, () => new RewardWorker(opts));
  }

  /** Loads the function (starting one worker) and says what it is. */
  async info(): Promise<FunctionInfo> {
    const w = this.workers[0]!;
    return w.alive && w.info ? w.info : w.start();
  }

  set onReload(fn: ((info: FunctionInfo) => void) | undefined) {
    for (const w of this.workers) w.onReload = fn;
  }

  async run(samples: RewardSample[], cb: RunCallbacks = {}): Promise<ScoreResult[]> {
    const out: ScoreResult[] = new Array(samples.length);
    const size = Math.max(1, Math.min(this.opts.batchSize ?? 8192, Math.ceil(samples.length / this.workers.length)));
    const queue: number[][] = [];
    for (let i = 0; i < samples.length; i += size) queue.push(Array.from({ length: Math.min(size, samples.length - i) }, (_, k) => i + k));
    const settle = (index: number, r: Omit<ScoreResult, 'index'> & { index?: number }) => {
      r.index = index;
      out[index] = r as ScoreResult;
      cb.onResult?.(out[index]);
    };
    const drive = async (worker: RewardWorker) => {
      for (let batch = queue.shift(); batch; batch = queue.shift()) {
        let rest = batch;
        // After a hang or crash outside careful mode the culprit is not known yet: the rest runs again, answering per sample.
        let careful = false;
        while (rest.length) {
          if (cb.signal?.aborted) {
            for (const i of rest) settle(i, { score: null, detail: null, error: 'cancelled', latencyMs: 0 });
            break;
          }
          const current = rest;
          let outcome;
          try {
            outcome = await worker.runBatch(current.map((i) => samples[i]!), { signal: cb.signal, careful, onResult: (k, r) => settle(current[k]!, r) });
          } catch (err) {
            // The worker could not start: every sample of the batch says why.
            for (const i of current) settle(i, { score: null, detail: null, error: err instanceof Error ? err.message : String(err), latencyMs: 0 });
            break;
          }
          if (outcome.stoppedAt === undefined) break;
          const stuck = current[outcome.stoppedAt];
          if (stuck === undefined) break;
          if (outcome.why !== 'cancelled' && !careful) {
            careful = true;
            rest = current.slice(outcome.stoppedAt);
            continue;
          }
          settle(stuck, { score: null, detail: null, error: outcome.why ?? 'stopped', latencyMs: outcome.why === 'cancelled' ? 0 : this.opts.timeoutMs });
          rest = current.slice(outcome.stoppedAt + 1);
          careful = false;
        }
      }
    };
    await Promise.all(this.workers.map(drive));
    return out;
  }

  dispose(): void {
    for (const w of this.workers) w.kill();
  }
}
