import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, writeSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { readRows } from '../../../src/core/datasets/dataset-reader';
import { inspectDataset } from '../../../src/core/datasets/inspect-dataset';

const TARGET_BYTES = 2 * 1024 ** 3;
const NOTE = 'A 58-year-old man presents with two days of fever, productive cough and pleuritic chest pain. '.repeat(18);

/** Writes verl RL rows (each prompt unique, three data sources) until the file reaches 2 GiB; returns the row count. */
function generate(file: string): number {
  const fd = openSync(file, 'w');
  let rows = 0;
  let bytes = 0;
  const sources = ['pubmedqa', 'medec', 'medqa'];
  while (bytes < TARGET_BYTES) {
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++, rows++) {
      lines.push(
        JSON.stringify({
          data_source: sources[rows % 3],
          prompt: [{ role: 'user', content: `Case ${rows}: ${NOTE}` }],
          ability: 'medical',
          reward_model: { style: 'rule', ground_truth: 'yes' },
          extra_info: { index: rows },
        }),
      );
    }
    const chunk = Buffer.from(lines.join('\n') + '\n');
    writeSync(fd, chunk);
    bytes += chunk.length;
  }
  closeSync(fd);
  return rows;
}

describe('a 2 GiB JSONL dataset', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-2g-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows its first rows at once and is scanned whole with bounded memory', { timeout: 120_000 }, async () => {
    const file = join(dir, 'big.jsonl');
    let t = performance.now();
    const rows = generate(file);
    const size = statSync(file).size;
    console.log(
      `[datasets] generated ${rows} rows, ${(size / 1024 ** 3).toFixed(2)} GiB in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const host = new LocalHost();
    t = performance.now();
    const reader = await openDataset(host, file);
    const first = await readRows(reader, 0, 100);
    const firstMs = performance.now() - t;
    console.log(`[datasets] first 100 rows in ${firstMs.toFixed(1)} ms (target under 100 ms)`);
    assert.equal(first.length, 100);
    assert.ok(firstMs < 500, `first rows took ${firstMs} ms`);
    const heapBefore = process.memoryUsage().heapUsed;
    t = performance.now();
    let peak = 0;
    const s = await inspectDataset(reader, { against: null, onProgress: () => (peak = Math.max(peak, process.memoryUsage().heapUsed)) });
    const scanS = (performance.now() - t) / 1000;
    console.log(
      `[datasets] full inspection: ${s.rows} rows in ${scanS.toFixed(1)} s (${(size / 1024 ** 2 / scanS).toFixed(0)} MiB/s), heap peak +${((peak - heapBefore) / 1024 ** 2).toFixed(0)} MiB`,
    );
    assert.equal(s.rows, rows);
    assert.equal(s.problemCount, 0);
    assert.deepEqual(s.dataSources, { pubmedqa: Math.ceil(rows / 3), medec: Math.ceil((rows - 1) / 3), medqa: Math.floor(rows / 3) });
    assert.ok(peak - heapBefore < 512 * 1024 ** 2, `heap grew by ${peak - heapBefore} bytes`);
    // After the scan the offset index makes a row near the end a seek.
    t = performance.now();
    const late = await readRows(reader, rows - 3, 1);
    const seekMs = performance.now() - t;
    console.log(`[datasets] row ${rows - 3} after the scan in ${seekMs.toFixed(1)} ms`);
    assert.equal((late[0]!.value as { extra_info: { index: number } }).extra_info.index, rows - 3);
    assert.ok(seekMs < 500, `seek took ${seekMs} ms`);
  });
});
