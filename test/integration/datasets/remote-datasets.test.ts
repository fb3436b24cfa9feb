import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { readRows } from '../../../src/core/datasets/dataset-reader';
import { inspectDataset } from '../../../src/core/datasets/inspect-dataset';
import { convertDataset } from '../../../src/core/datasets/convert-dataset';
import { writeConverted } from '../../../src/core/datasets/write-dataset';
import { rowsToJsonl, rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { uploadFiles } from '../../../src/core/datasets/upload-dataset';
import { HostPool } from '../../../src/core/remote/host-pool';
import { LocalHost } from '../../../src/core/remote/local-host';

const ROOT = join(__dirname, '../../..');
const rl = (i: number) => ({
  data_source: ['pubmedqa', 'medec'][i % 2],
  prompt: [
    {
      role: 'user',
      content: `Case ${i}: a febrile patient with cough and chest pain; record ${createHash('sha512').update(String(i)).digest('base64')} ${createHash('sha512').update(`x${i}`).digest('base64')}`,
    },
  ],
  ability: 'medical',
  reward_model: { style: 'rule', ground_truth: 'yes' },
});

describe('datasets on a real SSH host (sshd on loopback, SFTP range reads)', () => {
  let fx: SshdFixture;
  let host: Host;
  const dir = mkdtempSync(join(tmpdir(), 'medrl-remote-ds-'));
  before(async () => {
    chmodSync(dir, 0o755);
    fx = await startSshd();
    host = fx.makeHost({ name: 'gpu' });
    writeFileSync(join(dir, 'big.parquet'), rowsToParquet(Array.from({ length: 40_000 }, (_, i) => rl(i))));
    writeFileSync(join(dir, 'big.jsonl'), rowsToJsonl(Array.from({ length: 40_000 }, (_, i) => rl(i))));
  });
  after(async () => {
    await host?.dispose();
    await fx?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const name of ['big.parquet', 'big.jsonl']) {
    it(`previewing ${name} reads only the bytes of its first rows`, async () => {
      const file = join(dir, name);
      const before = host.stats().bytesRead;
      const reader = await openDataset(host, file);
      const rows = await readRows(reader, 0, 100);
      const read = host.stats().bytesRead - before;
      assert.equal(rows.length, 100);
      assert.deepEqual(rows[7]!.value, rl(7));
      console.log(
        `[datasets] remote preview of ${name}: ${read} of ${reader.size} bytes over SFTP (${((100 * read) / reader.size).toFixed(1)}%)`,
      );
      assert.ok(read < reader.size / 4, `read ${read} of ${reader.size} bytes`);
    });
  }

  it('inspects a remote file whole and writes a conversion back to the host', async () => {
    const s = await inspectDataset(await openDataset(host, join(dir, 'big.parquet')), { against: null, maxPromptTokens: 4096 });
    assert.deepEqual([s.kind, s.rows, s.problemCount, s.dataSources], ['verl-rl', 40_000, 0, { pubmedqa: 20_000, medec: 20_000 }]);
    await host.writeFile(join(dir, 'pubmedqa.json'), readFileSync(join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json')));
    const result = await convertDataset(await openDataset(host, join(dir, 'pubmedqa.json')), {
      split: 0.9,
      mapping: { question: 'QUESTION', answer: 'final_decision', id: '_key', dataSourceName: 'pubmedqa' },
    });
    const files = await writeConverted(host, result, { out: join(dir, 'verl'), split: true, jsonlTwin: true });
    assert.equal(files.length, 4);
    const test = await inspectDataset(await openDataset(host, join(dir, 'verl/test.parquet')));
    assert.deepEqual([test.rows, test.problemCount, test.comparedWith], [20, 0, join(dir, 'verl/train.parquet')]);
  });

  it('uploads local dataset files to a new folder on the host, byte for byte', async () => {
    const pool = new HostPool(
      () => [{ name: 'gpu', kind: 'ssh', sshAlias: fx.alias, runsDir: '~/medrl-runs', setup: [], env: {}, scheduler: 'ssh' }],
      async () => host,
    );
    const local = new LocalHost('local');
    const src = mkdtempSync(join(tmpdir(), 'medrl-upload-src-'));
    const parquet = join(ROOT, 'demo/data/pubmedqa/verl/train.parquet');
    const jsonl = join(src, "medec train's.jsonl"); // a space and a quote: the path is quoted for the remote shell
    writeFileSync(jsonl, rowsToJsonl(Array.from({ length: 60_000 }, (_, i) => rl(i)))); // ~23 MB: several 8 MiB chunks
    const dest = join(dir, 'uploads/pubmedqa');
    const progress: number[] = [];
    const written = await uploadFiles(pool, local, [parquet, jsonl], 'gpu', dest, {
      onProgress: (f, copied, total) => f === jsonl && progress.push(copied / total),
    });
    assert.ok(
      progress.length >= 3 && progress.at(-1) === 1 && progress.every((p, i) => i === 0 || p > progress[i - 1]!),
      `progress grows to 1: ${progress.join(', ')}`,
    );
    assert.deepEqual(written, [join(dest, 'train.parquet'), join(dest, "medec train's.jsonl")]);
    for (const [from, to] of [
      [parquet, written[0]!],
      [jsonl, written[1]!],
    ]) {
      assert.equal(
        createHash('sha256').update(readFileSync(to!)).digest('hex'),
        createHash('sha256').update(readFileSync(from!)).digest('hex'),
        `${to} matches ${from}`,
      );
    }
    await assert.rejects(uploadFiles(pool, local, [join(src, 'missing.jsonl')], 'gpu', dest), /missing\.jsonl/);
    // The host cannot write the file (here a folder is in the way): the error names the host, the file and the shell's reason.
    mkdirSync(join(dir, "blocked/medec train's.jsonl.medrl-upload"), { recursive: true });
    await assert.rejects(
      uploadFiles(pool, local, [jsonl], 'gpu', join(dir, 'blocked')),
      /^Error: gpu: uploading local:.*medec train's\.jsonl .*failed \(exit code \d+\): .*Is a directory/,
    );
    assert.ok(existsSync(join(dir, "blocked/medec train's.jsonl.medrl-upload")), 'the folder in the way is left alone');
    // Cancelled halfway: nothing is left under the dataset's name.
    const abort = new AbortController();
    await assert.rejects(
      uploadFiles(pool, local, [jsonl], 'gpu', join(dir, 'cancelled'), {
        signal: abort.signal,
        onProgress: (_f, copied) => copied > 8_000_000 && abort.abort(),
      }),
      /abort/i,
    );
    assert.deepEqual(readdirSync(join(dir, 'cancelled')), []);
    await assert.rejects(uploadFiles(pool, local, [jsonl], 'nowhere', dest), /unknown host "nowhere"/);
    rmSync(src, { recursive: true, force: true });
  });
});
