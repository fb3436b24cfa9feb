import { RewardWorker, type WorkerOptions } from './reward-worker';
import type { RewardSample, ScoreResult } from '../scoring/sample';
import type { FunctionInfo } from './types';
import { errorMessage } from '../errors/located-error';

interface RunnerOptions extends WorkerOptions {
  /** Worker processes for this function (calls that wait on a judge overlap across them). Default 1. */
  workers?: number;
  /** Samples per batch given to a worker (streamed to it in parts; the unit a hang or crash is recovered in). Default 8192. */
  batchSize?: number;
}

interface RunCallbacks {
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
    let next = 0;
    await Promise.all(
      this.workers.map(async (worker) => {
        while (next < samples.length) {
          const from = next;
          next = Math.min(samples.length, next + size);
          await this.scoreBatch(worker, samples.slice(from, next), from, cb.signal, (r) => {
            out[r.index] = r;
            cb.onResult?.(r);
          });
        }
      }),
    );
    return out;
  }

  /**
   * Scores samples as they are read, giving results back in input order (`index` counts from 0). Bounded memory: the
   * samples read ahead, being scored and scored but not yet taken by the caller are at most two batches per worker; a
   * caller that is slow to take results (a full pipe) holds reading back.
   */
  async *stream(source: AsyncIterable<RewardSample>, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ScoreResult> {
    const size = Math.max(1, this.opts.batchSize ?? 8192);
    const held = 2 * size * this.workers.length;
    const it = source[Symbol.asyncIterator]();
    /** Read ahead, not yet given to a worker (the first is sample `taken - buffer.length`). */
    const buffer: RewardSample[] = [];
    let taken = 0;
    let given = 0;
    let exhausted = false;
    let stopped = false;
    let finished = false;
    const halted = () => stopped || !!opts.signal?.aborted;
    let failure: { error: unknown } | undefined;
    const ready = new Map<number, ScoreResult>();
    let waiters: Array<() => void> = [];
    const changed = () => {
      const w = waiters;
      waiters = [];
      for (const wake of w) wake();
    };
    const wait = () => new Promise<void>((resolve) => waiters.push(resolve));
    // Workers take batches one at a time (reading the source is not reentrant).
    let turn: Promise<unknown> = Promise.resolve();
    const nextBatch = (): Promise<{ from: number; samples: RewardSample[] } | undefined> => {
      const batch = turn.then(async () => {
        while (!exhausted && !halted() && buffer.length < size * this.workers.length) {
          while (!halted() && taken - given >= held) await wait();
          if (halted()) break;
          const r = await it.next();
          if (r.done) exhausted = true;
          else {
            buffer.push(r.value);
            taken++;
          }
        }
        // Cancelled: what was read is answered 'cancelled'; the rest of the source is not read.
        if (stopped || !buffer.length) return undefined;
        // At the end of the source the rest is shared out, so a short file still keeps every worker busy.
        const n = exhausted ? Math.ceil(buffer.length / this.workers.length) : size;
        return { from: taken - buffer.length, samples: buffer.splice(0, n) };
      });
      turn = batch.catch(() => undefined);
      return batch;
    };
    const work = Promise.all(
      this.workers.map(async (worker) => {
        for (let b = await nextBatch(); b; b = await nextBatch()) {
          await this.scoreBatch(worker, b.samples, b.from, opts.signal, (r) => {
            ready.set(r.index, r);
            if (r.index === given) changed();
          });
        }
      }),
    ).then(
      () => {
        finished = true;
        changed();
      },
      (error: unknown) => {
        failure = { error };
        stopped = finished = true;
        changed();
      },
    );
    try {
      for (;;) {
        const r = ready.get(given);
        if (r) {
          ready.delete(given);
          given++;
          changed();
          yield r;
        } else if (failure) throw failure.error;
        else if (finished) return;
        else await wait();
      }
    } finally {
      // The caller stopped early (or an error): no more batches; those under way end before this returns.
      stopped = true;
      changed();
      await work;
      await it.return?.();
    }
  }

  /** Scores one batch on one worker; every sample is settled, including those a hang, a crash or a cancel stopped. */
  private async scoreBatch(
    worker: RewardWorker,
    samples: RewardSample[],
    from: number,
    signal: AbortSignal | undefined,
    settle: (r: ScoreResult) => void,
  ): Promise<void> {
    const done = (k: number, r: Omit<ScoreResult, 'index'> & { index?: number }) => {
      r.index = from + k;
      settle(r as ScoreResult);
    };
    let rest = 0;
    // After a hang or crash outside careful mode the culprit is not known yet: the rest runs again, answering per sample.
    let careful = false;
    while (rest < samples.length) {
      if (signal?.aborted) {
        for (let k = rest; k < samples.length; k++) done(k, { score: null, detail: null, error: 'cancelled', latencyMs: 0 });
        return;
      }
      const base = rest;
      let outcome;
      try {
        outcome = await worker.runBatch(samples.slice(base), { signal, careful, onResult: (k, r) => done(base + k, r) });
      } catch (err) {
        // The worker could not start: every sample of the batch says why.
        for (let k = base; k < samples.length; k++) done(k, { score: null, detail: null, error: errorMessage(err), latencyMs: 0 });
        return;
      }
      if (outcome.stoppedAt === undefined || base + outcome.stoppedAt >= samples.length) return;
      if (outcome.why !== 'cancelled' && !careful) {
        careful = true;
        rest = base + outcome.stoppedAt;
        continue;
      }
      done(base + outcome.stoppedAt, {
        score: null,
        detail: null,
        error: outcome.why ?? 'stopped',
        latencyMs: outcome.stoppedAfterMs ?? 0,
      });
      rest = base + outcome.stoppedAt + 1;
      careful = false;
    }
  }

  dispose(): void {
    for (const w of this.workers) w.kill();
  }
}
