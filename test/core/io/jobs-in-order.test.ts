import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { jobsInOrder } from '../../../src/core/io/jobs-in-order';

/** A worker that answers job {id, wait} after `wait` ms, and exits with code 3 on a job with `exit`. */
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (job) => {
  if (job.exit) process.exit(3);
  setTimeout(() => parentPort.postMessage({ id: job.id, doubled: job.id * 2 }), job.wait);
});`;
const pool = (n: number) => Array.from({ length: n }, () => new Worker(ECHO, { eval: true }));

describe('jobsInOrder', () => {
  it('yields results in job order though they finish out of order, with at most `ahead` out', async () => {
    let asked = 0;
    let mostAhead = 0;
    let yielded = 0;
    const got: number[] = [];
    for await (const r of jobsInOrder<{ id: number; doubled: number }>(
      pool(3),
      (id) => {
        if (id >= 40) return undefined;
        asked++;
        mostAhead = Math.max(mostAhead, asked - yielded);
        // Early jobs take longest, so later ones finish first.
        return { message: { id, wait: id % 5 === 0 ? 30 : 1 } };
      },
      { ahead: 5, what: 'an echo worker' },
    )) {
      yielded++;
      got.push(r.doubled);
    }
    assert.deepEqual(
      got,
      Array.from({ length: 40 }, (_, i) => i * 2),
    );
    assert.ok(mostAhead <= 6, `${mostAhead} jobs were out at once`);
  });

  it('fails with what stopped when a worker exits, and ends the others', async () => {
    const workers = pool(2);
    const run = async () => {
      for await (const _ of jobsInOrder(workers, (id) => (id < 10 ? { message: { id, wait: 1, exit: id === 4 } } : undefined), {
        ahead: 4,
        what: 'an echo worker',
      }));
    };
    await assert.rejects(run, /an echo worker stopped \(exit code 3\)/);
    assert.ok(
      workers.every((w) => w.threadId === -1),
      'every worker ended',
    );
  });

  it('stops waiting when the signal aborts', async () => {
    const stop = new AbortController();
    const run = async () => {
      for await (const _ of jobsInOrder(pool(2), (id) => ({ message: { id, wait: 10_000 } }), {
        ahead: 2,
        what: 'an echo worker',
        signal: stop.signal,
      }));
    };
    setTimeout(() => stop.abort(new Error('cancelled')), 50);
    await assert.rejects(run, /cancelled/);
  });
});
