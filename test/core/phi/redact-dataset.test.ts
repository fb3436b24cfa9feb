import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadataAsync } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { readRows } from '../../../src/core/datasets/dataset-reader';
import { rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { redactDataset, SameFileError } from '../../../src/core/phi/redact-dataset';
import { newPhiSummary, scanDataset } from '../../../src/core/phi/scan-dataset';
import { redactJsonText } from '../../../src/core/phi/redact-json-text';
import { redactText } from '../../../src/core/phi/redact-text';
import { hostAsyncBuffer } from '../../../src/core/io/host-async-buffer';

const ROOT = join(__dirname, '../../..');
const host = new LocalHost();

describe('phi redact of datasets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-phi-redact-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, data: string | Uint8Array) => {
    writeFileSync(join(dir, name), data);
    return join(dir, name);
  };

  it('JSONL: only the literal that held a phone changes; spacing, key order, 1.0, \\u00e9 escapes, CRLF and the byte order mark stay', async () => {
    const odd = `{ "z" :1.0,"note":  "caf\\u00e9, call 555-123-4567" , "a": [ "555-987-6543", "\\u00e9" ], "555-111-2222": 2 }`;
    const src = write('odd.jsonl', `\ufeff${odd}\r\n\n{"n": 1.50, "s": "caf\\u00e9"}\n{"tail": "no newline"}`);
    const out = join(dir, 'out', 'odd.jsonl');
    const summary = await redactDataset(host, src, out);
    const expected = `{ "z" :1.0,"note":  "café, call [PHONE]" , "a": [ "[PHONE]", "\\u00e9" ], "[PHONE]": 2 }`;
    assert.equal(readFileSync(out, 'utf8'), `\ufeff${expected}\r\n\n{"n": 1.50, "s": "caf\\u00e9"}\n{"tail": "no newline"}`);
    assert.equal(summary.rows, 3);
    assert.equal(summary.counts.phone, 3, 'two in values, one in a key');
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(dir, 'out')), ['odd.jsonl'], 'no temporary file is left');
  });

  it('JSON text: a literal with quotes and newlines is re-encoded as JSON; keys are redacted too', () => {
    const raw = '{\n  "555-123-4567": "x",\n  "q": "he said \\"555-123-4567\\"\\n"\n}';
    assert.equal(
      redactJsonText(raw, () => undefined),
      '{\n  "[PHONE]": "x",\n  "q": "he said \\"[PHONE]\\"\\n"\n}',
    );
  });

  it('JSON text: keys that would become one are numbered, so no value is lost; keys of other objects do not count', () => {
    const row = {
      contacts: { '555-123-4567': 'mother', '555-987-6543': 'father', '[PHONE] 2': 'as written', inner: { '555-000-1111': 1 } },
      other: { '[PHONE]': 'a different object' },
      list: [{ 'John Smith': 1 }, { 'Jane Doe': 2 }],
    };
    const found: string[] = [];
    const redacted = JSON.parse(redactJsonText(JSON.stringify(row), (c) => found.push(c))) as typeof row;
    assert.deepEqual(redacted, {
      contacts: { '[PHONE]': 'mother', '[PHONE] 3': 'father', '[PHONE] 2': 'as written', inner: { '[PHONE]': 1 } },
      other: { '[PHONE]': 'a different object' },
      list: [{ '[NAME]': 1 }, { '[NAME]': 2 }],
    });
    assert.deepEqual(found, ['phone', 'phone', 'phone', 'name', 'name']);
  });

  it('JSON file: every byte but the redacted literal', async () => {
    const text = '[\n  {"note": "call 555-123-4567", "score": 1.0},\n  {"note": "\\u00e9"}\n]\n';
    const out = join(dir, 'rows.out.json');
    const s = await redactDataset(host, write('rows.json', text), out);
    assert.equal(readFileSync(out, 'utf8'), text.replace('555-123-4567', '[PHONE]'));
    assert.equal(s.rows, 2);
  });

  it('CSV: a changed field is quoted as CSV needs; untouched fields and records keep their quoting and line breaks', async () => {
    const text =
      'id,note,other\r\n1,"line one,\r\nline two",x\r\n2,"pager ""555-123-4567"", ok",555-987-6543\r\n3,"keep ""quotes""",\r\n\r\n4,plain 555-111-2222,"y"';
    const out = join(dir, 'notes.out.csv');
    const s = await redactDataset(host, write('notes.csv', text), out);
    assert.equal(
      readFileSync(out, 'utf8'),
      'id,note,other\r\n1,"line one,\r\nline two",x\r\n2,"pager ""[PHONE]"", ok",[PHONE]\r\n3,"keep ""quotes""",\r\n\r\n4,plain [PHONE],"y"',
    );
    assert.equal(s.rows, 4);
    assert.equal(s.counts.phone, 3);
  });

  it('CSV: a column name holding an identifier is redacted in the header, numbered where two would be the same', async () => {
    const text = 'id,555-123-4567,"555-987-6543",[PHONE] 2\n1,a,b,c\n';
    const out = join(dir, 'header.out.csv');
    const s = await redactDataset(host, write('header.csv', text), out);
    assert.equal(readFileSync(out, 'utf8'), 'id,[PHONE],"[PHONE] 3",[PHONE] 2\n1,a,b,c\n');
    assert.equal(s.rows, 1);
    assert.equal(s.counts.phone, 2);
  });

  it('parquet (TRL completions columns, nested verl rows): same columns and values but the redacted strings', async () => {
    const trl = write(
      'completions_00001.parquet',
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'step', data: [1, 1], type: 'INT32' },
            { name: 'prompt', data: ['user\nCall 555-123-4567?\nassistant\n', 'user\nhi\nassistant\n'], type: 'STRING' },
            { name: 'completion', data: ['<answer>no</answer>', '<answer>555-987-6543</answer>'], type: 'STRING' },
            { name: 'accuracy_reward', data: [1, 0], type: 'DOUBLE' },
          ],
        }),
      ),
    );
    const out = join(dir, 'redacted.parquet');
    const s = await redactDataset(host, trl, out);
    assert.equal(s.rows, 2);
    const before = await openDataset(host, trl);
    const after = await openDataset(host, out);
    assert.deepEqual(after.declaredColumns, before.declaredColumns);
    assert.deepEqual(
      (await readRows(after, 0, 10)).map((r) => r.value),
      [
        { step: 1, prompt: 'user\nCall [PHONE]?\nassistant\n', completion: '<answer>no</answer>', accuracy_reward: 1 },
        { step: 1, prompt: 'user\nhi\nassistant\n', completion: '<answer>[PHONE]</answer>', accuracy_reward: 0 },
      ],
    );
    const verl = write(
      'verl.parquet',
      rowsToParquet([
        { prompt: [{ role: 'user', content: 'ring 555-123-4567' }], reward_model: { ground_truth: 'yes' }, extra_info: { index: 7 } },
      ]),
    );
    await redactDataset(host, verl, join(dir, 'verl.out.parquet'));
    assert.deepEqual((await readRows(await openDataset(host, join(dir, 'verl.out.parquet')), 0, 1))[0]!.value, {
      prompt: [{ role: 'user', content: 'ring [PHONE]' }],
      reward_model: { ground_truth: 'yes' },
      extra_info: { index: 7 },
    });
  });

  it('parquet: a timestamp column is reported as dates, and redacted to null with its type kept (required made optional)', async () => {
    const src = write(
      'admissions.parquet',
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'note', data: ['cough', 'fever'], type: 'STRING' },
            {
              name: 'admitted',
              data: [new Date('2023-04-01T10:05:00Z'), new Date('2024-12-25T00:00:00Z')],
              type: 'TIMESTAMP',
              nullable: false,
            },
          ],
        }),
      ),
    );
    const summary = newPhiSummary();
    const hits = [];
    for await (const batch of scanDataset(await openDataset(host, src), summary))
      for (const h of batch) hits.push(`${h.line} ${h.field} ${h.category} ${h.text}`);
    assert.deepEqual(hits, ['1 admitted date 2023-04-01T10:05:00.000Z', '2 admitted date 2024-12-25T00:00:00.000Z']);
    const out = join(dir, 'admissions.out.parquet');
    const s = await redactDataset(host, src, out);
    assert.deepEqual(s.counts, { date: 2 });
    assert.deepEqual(
      (await readRows(await openDataset(host, out), 0, 10)).map((r) => r.value),
      [
        { note: 'cough', admitted: null },
        { note: 'fever', admitted: null },
      ],
    );
    const column = async (f: string) =>
      (await parquetMetadataAsync(await hostAsyncBuffer(host, f))).schema.find((e) => e.name === 'admitted')!;
    const [was, now] = [await column(src), await column(out)];
    assert.equal(was.repetition_type, 'REQUIRED');
    assert.deepEqual(now, { ...was, repetition_type: 'OPTIONAL' });
  });

  it('parquet: the real TRL completions fixture keeps its schema, row count and every value but redacted strings', async () => {
    const real = join(
      ROOT,
      'test/fixtures/trl-real/medrl/runs/gpu-grpo-fn-20261125-174940-fe3f96/output/completions/completions_00001.parquet',
    );
    const out = join(dir, 'trl-real.parquet');
    await redactDataset(host, real, out);
    const footer = async (f: string) => (await parquetMetadataAsync(await hostAsyncBuffer(host, f))).schema;
    assert.deepEqual(await footer(out), await footer(real));
    const rows = async (f: string) => (await readRows(await openDataset(host, f), 0, 1000)).map((r) => r.value as Record<string, unknown>);
    // Whatever the detector finds, each string is what redactText makes of it, and the rest is unchanged.
    const expected = (await rows(real)).map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? redactText(v).text : v])),
    );
    assert.deepEqual(await rows(out), expected);
    assert.equal(expected.length, 8);
  });

  it('refuses OUT == FILE, and writes nothing when a row cannot be read (naming its line, not its text)', async () => {
    const src = write('bad.jsonl', '{"note": "ok"}\n{"note": "555-123-4567", oops}\n');
    await assert.rejects(redactDataset(host, src, join(dir, '.', 'bad.jsonl')), SameFileError);
    const out = join(dir, 'bad.out.jsonl');
    await assert.rejects(redactDataset(host, src, out), (err: Error) => {
      assert.match(err.message, /bad\.jsonl:2: malformed JSON/);
      assert.ok(!err.message.includes('555-123-4567'), err.message);
      return true;
    });
    assert.equal(existsSync(out), false);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('medrl-part')),
      [],
    );
  });
});
