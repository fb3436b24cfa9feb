import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { readLines } from '../../../src/core/io/line-reader';

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
});
