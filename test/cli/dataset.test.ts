import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';

const ROOT = join(__dirname, '../..');

describe('medrl dataset', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-cli-dataset-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('inspect prints kind, rows, columns and data_source counts; exit 0 without problems', async () => {
    const r = await run(['dataset', 'inspect', 'demo/data/pubmedqa/verl/train.parquet'], ROOT);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /kind {5}verl RL rows \(verl-rl\)/);
    assert.match(r.out, /rows {5}180 \(180 fine, 0 with problems\)/);
    assert.match(r.out, /columns {2}data_source, prompt, ability, reward_model, extra_info/);
    assert.match(r.out, /data_source {2}pubmedqa 180/);
    const j = await run(['dataset', 'inspect', 'demo/data/medec/medec-ms-validation-first200.csv', '--json'], ROOT);
    const s = JSON.parse(j.out) as { kind: string; rows: number; columns: string[] };
    assert.deepEqual([s.kind, s.rows, s.columns[0]], ['raw', 200, 'Text ID']);
  });

  it('inspect lists each problem as file:line (row, field) and exits 1', async () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify({ prompt: 'q', completion: 'a' })}\n{nope\n${JSON.stringify({ prompt: 'q2', completion: 3 })}\n`);
    const r = await run(['dataset', 'inspect', file]);
    assert.equal(r.code, 1);
    assert.ok(r.out.includes(`${file}:2 (row 2): error: line 2 (byte offset 32): malformed JSON`), r.out);
    assert.ok(r.out.includes(`${file}:3 (row 3, completion): error: must be text or a list of chat messages ({role, content})`), r.out);
    assert.match(r.out, /2 problem\(s\)$/m);
    const j = JSON.parse((await run(['dataset', 'inspect', file, '--json'])).out) as { problems: { row: number; field?: string }[] };
    assert.deepEqual(
      j.problems.map((p) => [p.row, p.field ?? null]),
      [
        [1, null],
        [2, 'completion'],
      ],
    );
  });

  it('convert writes a seeded split of verl parquet with JSONL twins from the real PubMedQA sample', async () => {
    const out = join(dir, 'verl');
    const args = [
      'dataset',
      'convert',
      join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json'),
      out,
      '--map',
      'question=QUESTION,answer=final_decision,id=_key',
      '--data-source',
      'pubmedqa',
      '--template',
      '{CONTEXTS}\\n\\nQuestion: {QUESTION}',
      '--split',
      '0.8',
      '--seed',
      '1',
      '--jsonl-twin',
    ];
    const r = await run(args);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(r.out, /200 row\(s\) read, 160 train, 40 test, 0 skipped/);
    const first = JSON.parse(readFileSync(join(out, 'test.jsonl'), 'utf8').split('\n')[0]!) as {
      data_source: string;
      prompt: { content: string }[];
    };
    assert.equal(first.data_source, 'pubmedqa');
    assert.match(first.prompt[0]!.content, /\n\nQuestion: /);
    const check = await run(['dataset', 'inspect', join(out, 'test.parquet'), '--json']);
    assert.equal(check.code, 0, check.out);
    assert.equal((JSON.parse(check.out) as { comparedWith: string }).comparedWith, join(out, 'train.parquet'));
  });

  it('bad usage exits 2', async () => {
    assert.equal((await run(['dataset', 'convert', 'a.json', 'b.parquet'])).code, 2);
    assert.equal((await run(['dataset', 'convert', 'a.json', 'b.parquet', '--map', 'question=q'])).code, 2);
    assert.equal((await run(['dataset', 'convert', 'a.json', 'b.parquet', '--map', 'question=q,answer=a', '--split', '2'])).code, 2);
    assert.equal((await run(['dataset', 'inspect'])).code, 2);
  });
});
