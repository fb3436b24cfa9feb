import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { readLineBytes, readLines, type Line } from '../../../src/core/io/line-reader';
import { seededRandom } from '../../../src/core/random/seeded-random';

async function all(it: AsyncIterable<Line>): Promise<Line[]> {
  const out: Line[] = [];
  for await (const l of it) out.push(l);
  return out;
}

describe('readLines', () => {
  const host = new LocalHost();
  const dir = mkdtempSync(join(tmpdir(), 'medrl-lines-'));

  it('splits lines across chunk boundaries, strips CRLF, keeps byte offsets of multi-byte text', async () => {
    const file = join(dir, 'a.log');
    const lines = ['step:1 - a:1', 'résumé ✓ ünïcode', '', 'windows line\r', 'x'.repeat(37)];
    writeFileSync(file, lines.join('\n') + '\n');
    for (const chunkSize of [1, 3, 7, 64, 1 << 20]) {
      const got = await all(readLines(host, file, { chunkSize }));
      assert.deepEqual(
        got.map((l) => l.text),
        ['step:1 - a:1', 'résumé ✓ ünïcode', '', 'windows line', 'x'.repeat(37)],
        `chunk ${chunkSize}`,
      );
      assert.equal(got[1]!.start, Buffer.byteLength('step:1 - a:1\n'));
      assert.equal(got.at(-1)!.end, Buffer.byteLength(lines.join('\n') + '\n'));
    }
  });

  it('holds back a last line without a newline until it is complete, and resumes from the last end', async () => {
    const file = join(dir, 'live.log');
    writeFileSync(file, 'one\ntw');
    const first = await all(readLines(host, file, { chunkSize: 4 }));
    assert.deepEqual(
      first.map((l) => l.text),
      ['one'],
    );
    const partial = await all(readLines(host, file, { includePartial: true }));
    assert.deepEqual(
      partial.map((l) => [l.text, l.complete]),
      [
        ['one', true],
        ['tw', false],
      ],
    );
    appendFileSync(file, 'o\nthree\n');
    const next = await all(readLines(host, file, { start: first.at(-1)!.end, chunkSize: 4 }));
    assert.deepEqual(
      next.map((l) => l.text),
      ['two', 'three'],
    );
  });

  it('stops at an end offset and reads only about the bytes it needs', async () => {
    const file = join(dir, 'big.log');
    writeFileSync(file, Array.from({ length: 10_000 }, (_, i) => `line ${i}`).join('\n') + '\n');
    const h = new LocalHost();
    const got = await all(readLines(h, file, { end: 30, chunkSize: 64 }));
    assert.deepEqual(
      got.map((l) => l.text),
      ['line 0', 'line 1', 'line 2', 'line 3', 'line 4'],
    );
    assert.ok(h.stats().bytesRead <= 128, `read ${h.stats().bytesRead} bytes`);
  });

  it('recycles its chunk buffers while reading ahead, and every line is still whole and right, also with a needle', async () => {
    // Lines from empty to several chunks long, so lines cross one, two and more chunk boundaries.
    const rng = seededRandom(7);
    const lines = Array.from(
      { length: 1000 },
      (_, i) => `${i % 5 === 0 ? 'step:' : 'noise '}${i} ${'x'.repeat(Math.floor(rng() ** 4 * 300))}`,
    );
    const file = join(dir, 'recycled.log');
    writeFileSync(file, lines.join('\n') + '\n');
    for (const chunkSize of [16, 61, 4096]) {
      for (const matching of [undefined, ['step:']]) {
        const buffers = new Set<ArrayBufferLike>();
        const got: string[] = [];
        for await (const l of readLineBytes(host, file, { chunkSize, readAhead: 2, matching })) {
          if (Math.floor(l.start / chunkSize) === Math.floor((l.end - 1) / chunkSize)) buffers.add(l.buf.buffer);
          got.push(l.buf.toString('utf8', l.from, l.to));
        }
        const want = matching ? lines.filter((l) => l.startsWith('step:')) : lines;
        assert.deepEqual(got, want, `chunk ${chunkSize}, matching ${matching}`);
        // Lines inside one chunk lie in the recycled buffers: one being read and two read ahead.
        assert.ok(buffers.size <= 3, `chunk ${chunkSize}: lines in ${buffers.size} buffers`);
      }
    }
  });
  it('reads range after range into the caller’s buffers, gives them back, and the lines are whole and right', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `row ${i} ${'n'.repeat(i % 97)} ✓`);
    const file = join(dir, 'ranges.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const size = Buffer.byteLength(lines.join('\n') + '\n');
    const buffers: Buffer[] = [];
    const seen = new Set<ArrayBufferLike>();
    const got: string[] = [];
    // Ranges cut at arbitrary bytes, as a parallel scan cuts them: each line is read in the range it starts in.
    for (let start = 0, step = 7919; start < size; start += step) {
      for await (const l of readLineBytes(host, file, { start: lineStart(start), end: start + step, chunkSize: 4096, buffers })) {
        seen.add(l.buf.buffer);
        got.push(l.buf.toString('utf8', l.from, l.to));
      }
      assert.ok(buffers.length >= 1, 'the buffer comes back when the range is done');
    }
    assert.deepEqual(got, lines);
    // About 50 ranges of two or three chunks each, all read into the one buffer handed back (lines that cross a chunk's
    // end are copies, in Node's pool of small buffers).
    const inChunks = [...seen].filter((b) => b.byteLength === 4096);
    assert.equal(inChunks.length, 1, `chunks read into ${inChunks.length} buffers`);
    assert.deepEqual(
      buffers.map((b) => b.buffer),
      inChunks,
    );

    function lineStart(at: number): number {
      if (at === 0) return 0;
      const text = Buffer.from(lines.join('\n') + '\n');
      return text.indexOf(10, at - 1) + 1;
    }
  });

  it('skips a line longer than maxLineBytes (its span, no bytes kept) wherever it falls, and reads the others whole', async () => {
    const file = join(dir, 'long.jsonl');
    const long = 'y'.repeat(5000);
    writeFileSync(file, `first\n${long}\nmiddle\n${'z'.repeat(60)}\nlast ${long}`);
    const lengths = (got: Line[]) =>
      got.map((l) => (l.tooLong ? `skipped ${l.start}-${l.end}${l.complete ? '' : ' partial'}` : l.text.length));
    for (const chunkSize of [7, 64, 1000, 4096, 1 << 20]) {
      const got = await all(readLines(host, file, { chunkSize, maxLineBytes: 100, includePartial: true }));
      assert.deepEqual(lengths(got), [5, 'skipped 6-5007', 6, 60, 'skipped 5075-10080 partial'], `chunk ${chunkSize}`);
      assert.ok(got.every((l) => !l.tooLong || l.text === ''));
    }
    // At the limit a line is kept; the bytes counted exclude the newline.
    assert.deepEqual(lengths(await all(readLines(host, file, { chunkSize: 16, maxLineBytes: 60 }))), [5, 'skipped 6-5007', 6, 60]);
    const bytes: Array<[boolean, number]> = [];
    for await (const l of readLineBytes(host, file, { chunkSize: 64, maxLineBytes: 100 })) bytes.push([l.tooLong ?? false, l.to - l.from]);
    assert.deepEqual(bytes, [
      [false, 5],
      [true, 0],
      [false, 6],
      [false, 60],
    ]);
  });
});
