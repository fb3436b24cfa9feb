import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { stdoutPipe } from '../../src/cli/command';

/** A stdout whose reader takes `ms` to take each chunk, keeping a copy of the bytes as they were when it took them. */
function slowStdout(ms: number) {
  const taken: string[] = [];
  const stdout = new Writable({
    highWaterMark: 1 << 20,
    write(chunk: Buffer, _enc, done) {
      setTimeout(() => {
        taken.push(chunk.toString('utf8'));
        done();
      }, ms);
    },
  });
  return { stdout, taken };
}

describe('stdoutPipe', () => {
  it('writeThrough answers only once the reader has the bytes, so the caller may reuse its buffer', async () => {
    const { stdout, taken } = slowStdout(20);
    const out = stdoutPipe({ stdout });
    const buf = Buffer.from('first range\n');
    assert.equal(await out.writeThrough(buf), true);
    // Reused at once, as a PHI scan reuses a worker's buffer: what was written before must not change.
    buf.write('second one\n');
    assert.equal(await out.writeThrough(buf.subarray(0, 11)), true);
    assert.deepEqual(taken, ['first range\n', 'second one\n']);
  });

  it('writeThrough answers false once the reader has closed the pipe', async () => {
    const stdout = new Writable({
      write(_chunk, _enc, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const out = stdoutPipe({ stdout });
    assert.equal(await out.writeThrough(Buffer.from('x\n')), false);
    assert.equal(out.open, false);
  });
});
