import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliPeak } from './cli-peak';

/** Writes `n` sample lines, in blocks (the test itself should not hold a 60 MB string). */
function writeSamples(file: string, n: number): void {
  const fd = openSync(file, 'w');
  try {
    for (let i = 0; i < n; i += 10_000) {
      let block = '';
      for (let k = i; k < Math.min(n, i + 10_000); k++)
        block += `{"data_source":"medqa","solution_str":"${k % 3 ? 'A' : 'B'}","ground_truth":"A","extra_info":{"i":${k}}}\n`;
      writeSync(fd, block);
    }
  } finally {
    closeSync(fd);
  }
}

describe('memory: reward run streams', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-memory-'));
  writeFileSync(
    join(dir, 'exact.py'),
    'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0 if solution_str == ground_truth else 0.0\n',
  );

  it('scores 1,000,000 rows in bounded memory, every result in input order (target < 200 MB RSS)', { timeout: 300_000 }, async () => {
    const N = 1_000_000;
    writeSamples(join(dir, 'million.jsonl'), N);
    const r = await cliPeak(['reward', 'run', '--fn', 'exact.py', '--samples', 'million.jsonl', '--json'], dir);
    console.log(`[memory] reward run 1,000,000 rows: peak RSS ${r.peakMb} MB (target 200)`);
    assert.equal(r.code, 0, r.stderr);
    // Checked without splitting 60 MB into a million strings: count, first and last lines, and that indexes run in order.
    const text = r.stdout.toString('utf8');
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, N);
    assert.deepEqual(JSON.parse(lines[0]!), { index: 0, score: 0, detail: null, error: null });
    assert.deepEqual(JSON.parse(lines[N - 1]!), { index: N - 1, score: (N - 1) % 3 ? 1 : 0, detail: null, error: null });
    for (let i = 0; i < N; i += 997) assert.ok(lines[i]!.startsWith(`{"index":${i},"score":${i % 3 ? 1 : 0},`), `line ${i}: ${lines[i]}`);
    assert.ok(r.peakMb < 200, `peak RSS ${r.peakMb} MB`);
  });

  it('refuses a 100 MB line with file:line without holding it; the rows around it are scored', { timeout: 120_000 }, async () => {
    const file = join(dir, 'one-huge-line.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, '{"solution_str":"A","ground_truth":"A"}\n{"solution_str":"');
    const mb = Buffer.alloc(1 << 20, 'x');
    for (let i = 0; i < 100; i++) writeSync(fd, mb);
    writeSync(fd, '","ground_truth":"A"}\n{"solution_str":"B","ground_truth":"A"}\n');
    closeSync(fd);
    const r = await cliPeak(['reward', 'run', '--fn', 'exact.py', '--samples', 'one-huge-line.jsonl', '--json'], dir);
    console.log(`[memory] reward run with one 100 MB line: peak RSS ${r.peakMb} MB`);
    assert.equal(r.code, 1, 'a refused line makes it exit 1');
    assert.match(r.stderr, /one-huge-line\.jsonl:2: error: this line is 100\.0 MiB, more than the 8 MiB a sample may take: skipped/);
    assert.deepEqual(
      r.stdout
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [
        { index: 0, score: 1, detail: null, error: null },
        // The refused line 2 keeps its place: the sample after it is the file's third row.
        { index: 2, score: 0, detail: null, error: null },
      ],
    );
    assert.ok(r.peakMb < 150, `peak RSS ${r.peakMb} MB`);
  });
});
