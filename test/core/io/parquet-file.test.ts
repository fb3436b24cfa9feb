import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { openEpisodeFile } from '../../../src/core/episodes/episode-file';
import { readSamples } from '../../../src/core/reward/sample-source';
import { rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { forgedParquet } from '../../fixtures/forged-parquet';

const ROWS = Array.from({ length: 200 }, (_, i) => ({ prompt: `question ${i} `.repeat(8), completion: `answer ${i} `.repeat(8) }));

describe('parquet footers are believed only as far as the file bears them out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-parquet-footer-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const host = new LocalHost();
  const file = (name: string, bytes: Uint8Array | string) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  const claims = (rows: bigint) =>
    forgedParquet(ROWS, (f) => {
      f.num_rows = rows;
      f.row_groups[0]!.num_rows = rows;
    });

  /** Every reader of parquet files (dataset, episodes, reward samples), each refusing the file with `message`. */
  async function everyReaderRefuses(path: string, message: RegExp): Promise<void> {
    await assert.rejects(openDataset(host, path), message);
    await assert.rejects(openEpisodeFile(host, path, 1).stream().next(), message);
    await assert.rejects(readSamples(host, path).next(), message);
  }

  it('a footer claiming 200 million rows, or 2^62, in a few KB is refused at once by every reader', async () => {
    const t0 = Date.now();
    await everyReaderRefuses(
      file('200m.parquet', claims(200_000_000n)),
      /200m\.parquet: the parquet footer is not believable \(row group 0 claims 200000000 rows in \d+ bytes of column data\)/,
    );
    await everyReaderRefuses(
      file('2e62.parquet', claims(2n ** 62n)),
      /2e62\.parquet: the parquet footer is not believable \(row group 0 claims 4611686018427387904 rows/,
    );
    assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  });

  it("a footer whose rows are not its row groups' rows, or whose column chunk lies outside the file, is refused", async () => {
    const sum = forgedParquet(ROWS, (f) => (f.num_rows = 201n));
    await everyReaderRefuses(
      file('sum.parquet', sum),
      /sum\.parquet: the parquet footer is not believable \(it claims 201 rows, its row groups hold 200\)/,
    );
    const outside = forgedParquet(ROWS, (f) => (f.row_groups[0]!.columns[1]!.meta_data!.data_page_offset = 1n << 40n));
    await everyReaderRefuses(
      file('outside.parquet', outside),
      /outside\.parquet: .*row group 0, column completion: bytes \d+-\d+ are outside the data of a \d+-byte file/,
    );
    const values = forgedParquet(ROWS, (f) => (f.row_groups[0]!.columns[0]!.meta_data!.num_values = 10n ** 12n));
    await everyReaderRefuses(file('values.parquet', values), /values\.parquet: .*column prompt: 1000000000000 values in \d+ bytes/);
  });

  it("a damaged footer is a plain error naming the file, never JavaScript's own words", async () => {
    const good = rowsToParquet(ROWS);
    // The footer's length says more bytes than there are; then its thrift bytes overwritten with noise.
    const longFooter = Buffer.from(good);
    longFooter.writeUInt32LE(good.length, good.length - 8);
    const noise = Buffer.from(good);
    const footerLength = noise.readUInt32LE(noise.length - 8);
    for (let i = noise.length - 8 - footerLength; i < noise.length - 8; i++) noise[i] = (i * 151) & 0xff;
    const truncated = Buffer.from(good.subarray(0, good.length - 20));
    for (const [name, bytes] of [
      ['long.parquet', longFooter],
      ['noise.parquet', noise],
      ['cut.parquet', truncated],
    ] as const) {
      const path = file(name, bytes);
      // Each reader is started only when its rejection is awaited: a rejection met before is unhandled.
      for (const attempt of [
        () => openDataset(host, path),
        () => openEpisodeFile(host, path, 1).stream().next(),
        () => readSamples(host, path).next(),
      ]) {
        await assert.rejects(attempt, (err: Error) => {
          assert.match(err.message, new RegExp(`${name.replace('.', '\\.')}: `));
          assert.doesNotMatch(err.message, /Cannot read properties|outside the bounds|is not a function|Invalid array length/);
          return true;
        });
      }
    }
  });
});
