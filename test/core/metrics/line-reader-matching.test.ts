import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { LocalHost } from '../../../src/core/remote/local-host';
import { readLineRuns, readLines } from '../../../src/core/io/line-reader';

describe('readLines({ matching })', () => {
  it('yields only lines containing a marker, with the same offsets as a full read, across chunk boundaries', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'medrl-match-')), 'a.log');
    const lines = ['noise ✓', 'step:1 - a:1', 'x'.repeat(50), "{'loss': 1}", 'more noise', 'tail step:2\r', 'partial step:3'];
    writeFileSync(file, lines.join('\n'));
    const host = new LocalHost();
    for (const chunkSize of [3, 8, 17, 64, 1 << 20]) {
      const all: Array<{ text: string; start: number; end: number }> = [];
      for await (const l of readLines(host, file, { chunkSize, includePartial: true })) all.push(l);
      const got: typeof all = [];
      for await (const l of readLines(host, file, { chunkSize, includePartial: true, matching: ['step:', "{'"] })) got.push(l);
      const want = all.filter((l) => l.text.includes('step:') || l.text.includes("{'"));
      assert.deepEqual(
        got.map((l) => [l.text, l.start, l.end]),
        want.map((l) => [l.text, l.start, l.end]),
        `chunk ${chunkSize}`,
      );
      assert.deepEqual(
        got.map((l) => l.text),
        ['step:1 - a:1', "{'loss': 1}", 'tail step:2', 'partial step:3'],
      );
    }
  });

  it('readLineRuns: each line holding a marker that starts in [start, end) comes once, in order, whole lines only', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'medrl-runs-')), 'a.log');
    const host = new LocalHost();
    const line = fc.oneof(fc.constantFrom('step:1 - a:1', 'noise', '', 'x step:2\r', '\ufeffstep:3'), fc.string({ maxLength: 30 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 80 }),
        fc.nat(),
        fc.nat(),
        async (lines, lastNewline, chunkSize, a, b) => {
          const text = Buffer.from(lines.join('\n') + (lastNewline ? '\n' : ''));
          writeFileSync(file, text);
          // The lines as a full read gives them, with their spans.
          const all: Array<{ text: string; start: number }> = [];
          for await (const l of readLines(host, file, { includePartial: true })) all.push(l);
          const [start, end] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y) as [number, number];
          // Ranges start at line starts, as the split parse's do.
          const from = all.find((l) => l.start >= start)?.start ?? text.length;
          const want = all.filter((l) => l.start >= from && l.start < end && l.text.includes('step:')).map((l) => [l.text, l.start]);
          const got: Array<[string, number]> = [];
          for await (const item of readLineRuns(host, file, { start: from, end, chunkSize, includePartial: true, matching: ['step:'] })) {
            if (!('run' in item)) {
              got.push([item.buf.toString('utf8', item.from, item.to), item.start]);
              continue;
            }
            assert.equal(item.buf[item.to - 1], 0x0a, 'a run ends with a newline');
            assert.equal(item.end - item.start, item.to - item.from);
            for (let p = item.from; p < item.to;) {
              const nl = item.buf.indexOf(0x0a, p);
              const t = item.buf.toString('utf8', p, nl > p && item.buf[nl - 1] === 0x0d ? nl - 1 : nl);
              if (t.includes('step:')) got.push([t, item.start + p - item.from]);
              p = nl + 1;
            }
          }
          assert.deepEqual(got, want);
        },
      ),
      { numRuns: 500 },
    );
  });
});
