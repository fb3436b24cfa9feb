import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { readRows, type DatasetRecord } from '../../../src/core/datasets/dataset-reader';
import { JsonlReader } from '../../../src/core/datasets/jsonl-reader';
import { rowsToJsonl, rowsToParquet } from '../../../src/core/datasets/parquet-rows';

const ROOT = join(__dirname, '../../..');
const PUBMEDQA = join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json');
const MEDEC = join(ROOT, 'demo/data/medec/medec-ms-validation-first200.csv');

async function all(reader: { rows(o?: { start?: number }): AsyncGenerator<DatasetRecord> }, start = 0): Promise<DatasetRecord[]> {
  const out: DatasetRecord[] = [];
  for await (const r of reader.rows({ start })) out.push(r);
  return out;
}

describe('dataset readers', () => {
  const host = new LocalHost();
  const dir = mkdtempSync(join(tmpdir(), 'medrl-readers-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  // The real PubMedQA sample (an object keyed by PubMed id), as rows with the id in `_id`.
  const pubmed = Object.entries(JSON.parse(readFileSync(PUBMEDQA, 'utf8')) as Record<string, Record<string, unknown>>).map(
    ([id, r]): Record<string, unknown> => ({ _id: id, ...r }),
  );

  it('reads the real PubMedQA sample as JSON keyed by id, with each row at its line', async () => {
    const reader = await openDataset(host, PUBMEDQA);
    const rows = await all(reader);
    assert.equal(rows.length, 200);
    assert.equal(reader.knownRowCount, 200);
    assert.equal(rows[0]!.key, '21645374');
    assert.equal((rows[0]!.value as { final_decision: string }).final_decision, 'yes');
    const lines = readFileSync(PUBMEDQA, 'utf8').split('\n');
    for (const r of [rows[0]!, rows[1]!, rows[199]!])
      assert.match(lines[r.line! - 1]!, new RegExp(`"${r.key}": \\{`), `row ${r.index} at line ${r.line}`);
  });

  it('reads the same real rows back from JSON (array and object of arrays), JSONL, parquet and CSV', async () => {
    const flat = pubmed.map((r) => ({ id: r._id, question: r.QUESTION, contexts: r.CONTEXTS, year: r.YEAR, answer: r.final_decision }));
    writeFileSync(join(dir, 'array.json'), JSON.stringify(flat, null, 2));
    writeFileSync(join(dir, 'splits.json'), JSON.stringify({ train: flat.slice(0, 150), test: flat.slice(150) }));
    writeFileSync(join(dir, 'rows.jsonl'), rowsToJsonl(flat));
    writeFileSync(join(dir, 'rows.parquet'), rowsToParquet(flat));
    const csvCell = (v: unknown) => `"${String(v).replace(/"/g, '""')}"`;
    writeFileSync(
      join(dir, 'rows.csv'),
      ['id,question,answer', ...flat.map((r) => [r.id, r.question, r.answer].map(csvCell).join(','))].join('\r\n') + '\r\n',
    );
    for (const f of ['array.json', 'splits.json', 'rows.jsonl', 'rows.parquet']) {
      const rows = await all(await openDataset(host, join(dir, f)));
      assert.deepEqual(
        rows.map((r) => r.value),
        flat,
        f,
      );
    }
    const split = await all(await openDataset(host, join(dir, 'splits.json')));
    assert.deepEqual([split[149]!.key, split[150]!.key], ['train', 'test']);
    const csv = await all(await openDataset(host, join(dir, 'rows.csv')));
    assert.deepEqual(
      csv.map((r) => r.value),
      flat.map((r) => ({ id: r.id, question: r.question, answer: r.answer })),
    );
  });

  it('reads the real MEDEC CSV: quoted multi-line clinical notes, each row at the line where it starts', async () => {
    const reader = await openDataset(host, MEDEC);
    assert.deepEqual(reader.declaredColumns?.slice(0, 4), ['Text ID', 'Text', 'Sentences', 'Error Flag']);
    const rows = await all(reader);
    assert.equal(rows.length, 200);
    assert.ok(rows.every((r) => r.error === undefined));
    const lines = readFileSync(MEDEC, 'utf8').split('\n');
    for (const r of rows.filter((_, i) => i % 37 === 0)) {
      const id = (r.value as Record<string, string>)['Text ID']!;
      assert.ok(lines[r.line! - 1]!.startsWith(`${id},`), `${id} starts at line ${r.line}`);
    }
    const sentences = (rows[0]!.value as Record<string, string>).Sentences!;
    assert.ok(sentences.split('\n').length > 5, 'the multi-line Sentences field is one value');
  });

  it('reports malformed JSONL lines with line and byte offset, and still reads every other row', async () => {
    const good = (i: number) => JSON.stringify({ prompt: `q${i}`, completion: `a${i}` });
    const lines = [good(0), good(1), '{"prompt": "broken', good(3), '', good(4), 'not json at all', good(6)];
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, lines.join('\n') + '\n{"prompt": "cut off');
    const rows = await all(await openDataset(host, file));
    assert.equal(rows.length, 8, 'blank lines are no rows; malformed lines are rows with an error');
    assert.deepEqual(
      rows.filter((r) => r.error).map((r) => [r.index, r.line]),
      [
        [2, 3],
        [5, 7],
        [7, 9],
      ],
    );
    const offset = Buffer.byteLength(lines.slice(0, 2).join('\n') + '\n');
    assert.match(rows[2]!.error!, new RegExp(`^line 3 \\(byte offset ${offset}\\): malformed JSON`));
    assert.match(rows[7]!.error!, /truncated/);
    assert.deepEqual(
      rows.filter((r) => !r.error).map((r) => (r.value as { prompt: string }).prompt),
      ['q0', 'q1', 'q3', 'q4', 'q6'],
    );
  });

  it('a truncated parquet file gives an error naming the file, its size and the footer offset', async () => {
    const full = rowsToParquet(pubmed.slice(0, 50).map((r) => ({ id: r._id, q: r.QUESTION })));
    const file = join(dir, 'cut.parquet');
    writeFileSync(file, full.subarray(0, Math.floor(full.length * 0.7)));
    await assert.rejects(openDataset(host, file), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `local:${file.replace(/[.]/g, '\\.')}: cannot read the parquet footer at byte offset \\d+ of ${statSync(file).size} \\(the file is truncated or not parquet\\)`,
        ),
      );
      return true;
    });
    writeFileSync(join(dir, 'tiny.parquet'), 'PAR1');
    await assert.rejects(openDataset(host, join(dir, 'tiny.parquet')), /4 bytes is shorter than the header and footer/);
  });

  it('a CSV record with the wrong number of fields is a row with its line; the rest are read', async () => {
    const file = join(dir, 'ragged.csv');
    writeFileSync(file, 'id,text,label\n1,"a note\nover two lines",yes\n2,only two\n3,fine,no\n');
    const rows = await all(await openDataset(host, file));
    assert.equal(rows.length, 3);
    assert.deepEqual(rows[0]!.value, { id: '1', text: 'a note\nover two lines', label: 'yes' });
    assert.match(rows[1]!.error!, /^line 4: .*Invalid Record Length/);
    assert.deepEqual(rows[2]!.value, { id: '3', text: 'fine', label: 'no' });
  });

  it('JSONL "row N" is a seek through the sparse offset index after the first pass', async () => {
    const file = join(dir, 'many.jsonl');
    writeFileSync(file, rowsToJsonl(Array.from({ length: 5000 }, (_, i) => ({ prompt: `question ${i}`, n: i }))));
    const reader = new JsonlReader(host, file, statSync(file).size, 256);
    const cold = await readRows(reader, 4321, 2);
    assert.deepEqual(
      cold.map((r) => (r.value as { n: number }).n),
      [4321, 4322],
    );
    assert.equal(cold[0]!.line, 4322);
    assert.ok(reader.indexedRows >= 4096, 'the pass indexed the rows it went over');
    const before = host.stats().bytesRead;
    const warm = await readRows(reader, 4100, 1);
    assert.equal((warm[0]!.value as { n: number }).n, 4100);
    // From the indexed row 4096 to 4100 (one 1 MiB chunk at most), not from the start of the file.
    const read = host.stats().bytesRead - before;
    assert.ok(
      read <= statSync(file).size - Number(readFileSync(file, 'utf8').split('\n').slice(0, 4096).join('\n').length),
      `read ${read} bytes`,
    );
  });

  it('previewing a large parquet file reads its footer and first row group only', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      data_source: i % 3 ? 'pubmedqa' : 'medec',
      prompt: [
        {
          role: 'user',
          content: `${pubmed[i % 200]!.QUESTION as string} (${i}) ${(pubmed[(i * 7) % 200]!.CONTEXTS as string[])[0]!.slice(i % 50)}`,
        },
      ],
      reward_model: { style: 'rule', ground_truth: 'yes' },
    }));
    const file = join(dir, 'big.parquet');
    writeFileSync(file, rowsToParquet(rows));
    const size = statSync(file).size;
    const before = host.stats().bytesRead;
    const reader = await openDataset(host, file);
    const first = await readRows(reader, 0, 100);
    const read = host.stats().bytesRead - before;
    assert.equal(first.length, 100);
    assert.deepEqual(first[5]!.value, rows[5]);
    console.log(`[datasets] parquet preview: ${read} of ${size} bytes read (${((100 * read) / size).toFixed(1)}%)`);
    assert.ok(read < size / 4, `read ${read} of ${size} bytes`);
    const tail = await readRows(reader, 19_990, 100);
    assert.deepEqual(
      tail.map((r) => r.index),
      Array.from({ length: 10 }, (_, i) => 19_990 + i),
    );
    assert.deepEqual(tail[9]!.value, rows[19_999]);
  });

  it('previewing the first rows of a large JSONL file reads about one chunk, not the file', async () => {
    const file = join(dir, 'big.jsonl');
    const line = JSON.stringify({ prompt: 'x'.repeat(900) }) + '\n';
    writeFileSync(file, line.repeat(20_000));
    const before = host.stats().bytesRead;
    const first = await readRows(await openDataset(host, file), 0, 100);
    const read = host.stats().bytesRead - before;
    assert.equal(first.length, 100);
    assert.ok(read <= (1 << 20) + 1024, `read ${read} of ${statSync(file).size} bytes`);
  });
});
