import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { newPhiSummary, openDatasetForPhi, scanDataset, type PhiHit } from '../../../src/core/phi/scan-dataset';
import { fieldPath, stringsIn } from '../../../src/core/phi/value-strings';
import { writeTrlCompletions } from '../episodes/trl-fixture';

const ROOT = join(__dirname, '../../..');
const host = new LocalHost();

/** The phone findings of a file (the real detector finds more categories; these tests plant phones only). */
async function phones(file: string) {
  const summary = newPhiSummary();
  const unreadable: string[] = [];
  const hits: PhiHit[] = [];
  for await (const batch of scanDataset(await openDatasetForPhi(host, file), summary, { onUnreadable: (p) => unreadable.push(p) }))
    hits.push(...batch.filter((h) => h.category === 'phone'));
  return {
    hits: hits.map((h) => [h.line, h.field, h.text, h.start, h.end]),
    keyed: hits.map((h) => [h.line, h.field, h.text, h.start, h.end, h.key ?? false]),
    summary,
    unreadable,
  };
}

describe('phi scan of datasets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-phi-scan-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names each string by its field path', () => {
    assert.equal(fieldPath('', 'note'), 'note');
    assert.equal(fieldPath('prompt', 0), 'prompt[0]');
    assert.deepEqual(
      [...stringsIn({ prompt: [{ role: 'user', content: 'c' }], reward_model: { ground_truth: 'g' }, n: 1 })].map((s) => s.field),
      ['prompt[0].role', 'prompt[0].content', 'reward_model.ground_truth'],
    );
    assert.deepEqual(
      [...stringsIn({ a: { b: ['x'] } }, true)].map((s) => [s.field, s.text, s.key ?? false]),
      [
        ['a', 'a', true],
        ['a.b', 'b', true],
        ['a.b[0]', 'x', false],
      ],
      'with keys: each key before its value, by its own path',
    );
  });

  it('object keys, a CSV header and a JSON row id are scanned too, as keys', async () => {
    const jsonl = join(dir, 'keys.jsonl');
    writeFileSync(jsonl, `${JSON.stringify({ contacts: { '555-123-4567': 'mother' }, note: 'x' })}\n`);
    assert.deepEqual((await phones(jsonl)).keyed, [[1, 'contacts.555-123-4567', '555-123-4567', 0, 12, true]]);
    const csv = join(dir, 'header.csv');
    writeFileSync(csv, 'id,pager 555-123-4567\n1,555-987-6543\n');
    assert.deepEqual((await phones(csv)).keyed, [
      [1, 'pager 555-123-4567', '555-123-4567', 6, 18, true],
      [2, 'pager 555-123-4567', '555-987-6543', 0, 12, false],
    ]);
    const keyed = join(dir, 'keyed-by-phone.json');
    writeFileSync(keyed, `{\n "555-765-4321": {"a": "b"},\n "1001": {"a": "c"}\n}\n`);
    assert.deepEqual((await phones(keyed)).keyed, [[2, '(row key)', '555-765-4321', 0, 12, true]]);
    const arrays = join(dir, 'arrays.json');
    writeFileSync(arrays, `{"555-765-4321": [{"a": "b"}, {"a": "c"}]}\n`);
    assert.equal((await phones(arrays)).keyed.length, 1, 'the name of an array of rows, once, not once per row');
  });

  it('JSONL: each finding with its line, field path and offsets; blank lines count as lines, a malformed row is reported without its text', async () => {
    const file = join(dir, 'notes.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ prompt: [{ role: 'user', content: 'Call me at 555-123-4567.' }], reward_model: { ground_truth: 'yes' } }),
        '',
        JSON.stringify({ note: 'none here' }),
        '{"note": "555-222-3333", broken',
        JSON.stringify({ note: 'home 555-987-6543', reward_model: { ground_truth: 'work 555-000-1111' } }),
      ].join('\n'),
    );
    const r = await phones(file);
    assert.deepEqual(r.hits, [
      [1, 'prompt[0].content', '555-123-4567', 11, 23],
      [5, 'note', '555-987-6543', 5, 17],
      [5, 'reward_model.ground_truth', '555-000-1111', 5, 17],
    ]);
    assert.equal(r.summary.rows, 4);
    assert.equal(r.summary.unreadable, 1);
    assert.equal(r.summary.counts.phone, 3);
    assert.equal(r.unreadable.length, 1);
    assert.match(r.unreadable[0]!, /^line 4 \(byte offset \d+\): malformed JSON/);
    assert.ok(!r.unreadable[0]!.includes('555-222-3333'), r.unreadable[0]);
  });

  it('JSON: the line where each row starts, in an array and in an object keyed by id', async () => {
    const arr = join(dir, 'rows.json');
    writeFileSync(arr, `[\n  {"note": "a"},\n  {\n    "note": "call 555-123-4567"\n  }\n]\n`);
    assert.deepEqual((await phones(arr)).hits, [[3, 'note', '555-123-4567', 5, 17]]);
    const keyed = join(dir, 'keyed.json');
    writeFileSync(keyed, `{\n "2001": {"CONTEXTS": ["x", "tel 555-765-4321"]},\n "1001": {"CONTEXTS": []}\n}\n`);
    assert.deepEqual((await phones(keyed)).hits, [[2, 'CONTEXTS[1]', '555-765-4321', 4, 16]]);
  });

  it('CSV: the line a record starts on, after quoted fields holding commas and line breaks', async () => {
    const file = join(dir, 'notes.csv');
    writeFileSync(file, 'id,note\r\n1,"first line,\r\nsecond line"\r\n2,"pager ""555-123-4567"", ok"\r\n3,plain 555-987-6543\r\n');
    assert.deepEqual((await phones(file)).hits, [
      [4, 'note', '555-123-4567', 7, 19],
      [5, 'note', '555-987-6543', 6, 18],
    ]);
  });

  it('parquet: the 1-based row, inside nested lists and structs', async () => {
    const file = join(dir, 'verl.parquet');
    const row = (content: string) => ({ prompt: [{ role: 'user', content }], reward_model: { ground_truth: 'no' } });
    writeFileSync(file, rowsToParquet([row('none'), row('none'), row('ring 555-123-4567')]));
    assert.deepEqual((await phones(file)).hits, [[3, 'prompt[0].content', '555-123-4567', 5, 17]]);
  });

  it('a verl rollout dump from the fixtures reads as JSONL: no phone in it, then one planted in its output', async () => {
    const fixture = join(ROOT, 'test/fixtures/episodes/verl-run/rollouts/1.jsonl');
    const clean = await phones(fixture);
    assert.deepEqual(clean.hits, []);
    assert.ok(clean.summary.rows > 0);
    assert.equal(clean.summary.unreadable, 0);
    const first = JSON.parse((await host.readFile(fixture)).toString('utf8').split('\n')[0]!) as Record<string, unknown>;
    const file = join(dir, '2.jsonl');
    writeFileSync(file, `${JSON.stringify(first)}\n${JSON.stringify({ ...first, output: 'Call the ward at 555-123-4567.' })}\n`);
    assert.deepEqual((await phones(file)).hits, [[2, 'output', '555-123-4567', 17, 29]]);
  });

  it('TRL completions parquet (the real run fixture and the test writer of its format) read as parquet rows', async () => {
    const real = join(
      ROOT,
      'test/fixtures/trl-real/medrl/runs/gpu-grpo-fn-20261125-174940-fe3f96/output/completions/completions_00001.parquet',
    );
    const r = await phones(real);
    assert.deepEqual(r.hits, []);
    assert.equal(r.summary.rows, 8);
    const written = join(writeTrlCompletions(join(dir, 'trl'), [3]), 'completions_00003.parquet');
    const w = await phones(written);
    assert.deepEqual(w.hits, []);
    assert.equal(w.summary.rows, 8);
  });
});
