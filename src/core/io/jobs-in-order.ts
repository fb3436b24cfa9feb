import type { Transferable, Worker } from 'node:worker_threads';

/** A job's message to a worker (it carries the job's id), and what it hands over without a copy. */
export interface WorkerJob {
  message: unknown;
  transfer?: Transferable[];
}

/**
 * Runs numbered jobs on a pool of worker threads and yields their results in job order, whatever order they finish in.
 * `nextJob(id)` makes job `id` (ids count from 0), or says there are no more (undefined); it is asked only while fewer
 * than `ahead` results are out or waiting their turn, so memory stays bounded however many jobs there are. Each worker
 * answers each job with one message carrying its id. The pool is this function's: its workers are ended when it
 * returns, throws (a worker's error, or one that stopped: `what` names it) or is left, and once `signal` aborts.
 */
export async function* jobsInOrder<R extends { id: number }>(
  workers: Worker[],
  nextJob: (id: number) => WorkerJob | undefined,
  opts: { ahead: number; what: string; signal?: AbortSignal },
): AsyncGenerator<R> {
  const idle = [...workers];
  const done = new Map<number, R>();
  let failure: unknown;
  let wake: (() => void) | undefined;
  let sent = 0;
  let yielded = 0;
  let more = true;
  const dispatch = () => {
    while (more && idle.length > 0 && sent - yielded < opts.ahead) {
      const job = nextJob(sent);
      if (!job) more = false;
      else {
        idle.pop()!.postMessage(job.message, job.transfer);
        sent++;
      }
    }
  };
  for (const w of workers) {
    w.on('message', (r: R) => {
      idle.push(w);
      done.set(r.id, r);
      dispatch();
      wake?.();
    });
    w.on('error', (err) => {
      failure ??= err;
      wake?.();
    });
    w.on('exit', (code) => {
      failure ??= new Error(`${opts.what} stopped (exit code ${code})`);
      wake?.();
    });
  }
  const onAbort = () => wake?.();
  opts.signal?.addEventListener('abort', onAbort);
  try {
    dispatch();
    while (yielded < sent) {
      let r = done.get(yielded);
      while (r === undefined) {
        opts.signal?.throwIfAborted();
        if (failure !== undefined) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        r = done.get(yielded);
      }
      done.delete(yielded);
      yielded++;
      // The next jobs go out before this result is taken, so the workers go on while the caller works on it.
      dispatch();
      yield r;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    for (const w of workers) w.removeAllListeners('exit');
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
