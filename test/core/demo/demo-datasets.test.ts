import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { LocalHost } from '../../../src/core/remote/local-host';
import { writeDemoDatasets } from '../../../src/core/demo/demo-datasets';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { inspectDataset } from '../../../src/core/datasets/inspect-dataset';

const root = join(__dirname, '../../..');
const demo = join(root, 'demo');

describe('demo training files', () => {
  const out = mkdtempSync(join(tmpdir(), 'medrl-demo-data-'));
  after(() => rmSync(out, { recursive: true, force: true }));

  it('are exactly what the converter makes from the real samples (regenerate: npx tsx scripts/make-demo-datasets.ts)', async () => {
    const files = await writeDemoDatasets(new LocalHost(), demo, out);
    assert.equal(files.length, 8);
    for (const f of files) {
      const committed = join(demo, relative(out, f));
      assert.ok(existsSync(committed), `${relative(root, committed)} is in the repository`);
      assert.ok(readFileSync(committed).equals(readFileSync(f)), `${relative(root, committed)} equals a fresh conversion`);
    }
  });

  it('are the files the demo run spec trains on: verl RL rows with no problems, no train/test overlap, a JSONL twin for the stand-in', async () => {
    const spec = parse(readFileSync(join(root, 'configs/local-demo.yaml'), 'utf8')) as { data: { train: string; val: string } };
    const host = new LocalHost();
    for (const [path, rows] of [
      [spec.data.train, 180],
      [spec.data.val, 20],
    ] as const) {
      const s = await inspectDataset(await openDataset(host, join(demo, path)));
      assert.deepEqual([s.kind, s.rows, s.problemCount, s.dataSources], ['verl-rl', rows, 0, { pubmedqa: rows }], path);
      const twin = await inspectDataset(await openDataset(host, join(demo, path.replace(/\.parquet$/, '.jsonl'))), { against: null });
      assert.deepEqual([twin.kind, twin.rows], ['verl-rl', rows]);
    }
    const medec = await inspectDataset(await openDataset(host, join(demo, 'data/medec/verl/test.parquet')), { maxPromptTokens: 2048 });
    assert.deepEqual([medec.rows, medec.problemCount, medec.dataSources], [20, 0, { medec: 20 }]);
  });
});
