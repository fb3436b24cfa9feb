import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { convertDataset, testRows, type ConvertOptions } from '../../../src/core/datasets/convert-dataset';
import { writeConverted } from '../../../src/core/datasets/write-dataset';
import { inspectDataset } from '../../../src/core/datasets/inspect-dataset';

const ROOT = join(__dirname, '../../..');
const PUBMEDQA = join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json');
const MEDEC = join(ROOT, 'demo/data/medec/medec-ms-validation-first200.csv');
const pubmedOptions = (over: Partial<ConvertOptions> = {}): ConvertOptions => ({
  format: 'verl',
  split: 0.9,
  seed: 42,
  mapping: {
    question: 'QUESTION',
    answer: 'final_decision',
    id: '_key',
    dataSourceName: 'pubmedqa',
    abilityName: 'medical',
    template: '{CONTEXTS}\n\nQuestion: {question}',
    extra: [],
  },
  ...over,
});

describe('dataset conversion', () => {
  const host = new LocalHost();
  const dir = mkdtempSync(join(tmpdir(), 'medrl-convert-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('converts the real PubMedQA sample to verl RL rows with a template and a seeded 90/10 split', async () => {
    const r = await convertDataset(await openDataset(host, PUBMEDQA), pubmedOptions());
    assert.equal(r.rowsIn, 200);
    assert.deepEqual([r.train.length, r.test.length, r.problems.length], [180, 20, 0]);
    const raw = JSON.parse(readFileSync(PUBMEDQA, 'utf8')) as Record<
      string,
      { QUESTION: string; CONTEXTS: string[]; final_decision: string }
    >;
    const row = r.test[0] as {
      data_source: string;
      prompt: { role: string; content: string }[];
      reward_model: { ground_truth: string };
      extra_info: { split: string; index: number; id: string };
    };
    const src = raw[row.extra_info.id]!;
    assert.equal(row.data_source, 'pubmedqa');
    assert.deepEqual(row.prompt, [{ role: 'user', content: `${src.CONTEXTS.join('\n')}\n\nQuestion: ${src.QUESTION}` }]);
    assert.equal(row.reward_model.ground_truth, src.final_decision);
    assert.deepEqual([row.extra_info.split, row.extra_info.index], ['test', 0]);
    // Deterministic: the same seed gives the same split, another seed another one.
    const again = await convertDataset(await openDataset(host, PUBMEDQA), pubmedOptions());
    assert.deepEqual(again, r);
    const other = await convertDataset(await openDataset(host, PUBMEDQA), pubmedOptions({ seed: 7 }));
    assert.notDeepEqual(
      other.test.map((x) => (x.extra_info as { id: string }).id),
      r.test.map((x) => (x.extra_info as { id: string }).id),
    );
    assert.equal(testRows(1000, 0.9, 1).size, 100);
  });

  it('writes verl parquet that DuckDB reads with nested types, and a JSONL twin of the same rows', async () => {
    const r = await convertDataset(await openDataset(host, PUBMEDQA), pubmedOptions());
    const files = await writeConverted(host, r, { out: join(dir, 'verl'), split: true, jsonlTwin: true });
    assert.deepEqual(
      files.map((f) => f.slice(dir.length + 1)),
      ['verl/train.parquet', 'verl/train.jsonl', 'verl/test.parquet', 'verl/test.jsonl'],
    );
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const types = (await db.runAndReadAll(`describe select * from read_parquet('${join(dir, 'verl/train.parquet')}')`)).getRowObjectsJson();
    assert.deepEqual(Object.fromEntries(types.map((t) => [t.column_name, t.column_type])), {
      data_source: 'VARCHAR',
      prompt: 'STRUCT("role" VARCHAR, "content" VARCHAR)[]',
      ability: 'VARCHAR',
      reward_model: 'STRUCT(style VARCHAR, ground_truth VARCHAR)',
      extra_info: 'STRUCT(split VARCHAR, "index" BIGINT, id VARCHAR, question VARCHAR, answer VARCHAR)',
    });
    const viaDuck = (
      await db.runAndReadAll(
        `select prompt[1].content as c, reward_model.ground_truth as gt from read_parquet('${join(dir, 'verl/test.parquet')}')`,
      )
    ).getRowObjectsJson();
    const twin = readFileSync(join(dir, 'verl/test.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: { content: string }[]; reward_model: { ground_truth: string } });
    assert.deepEqual(
      viaDuck,
      twin.map((t) => ({ c: t.prompt[0]!.content, gt: t.reward_model.ground_truth })),
    );
    const s = await inspectDataset(await openDataset(host, join(dir, 'verl/test.parquet')));
    assert.deepEqual([s.kind, s.rows, s.rowsOk, s.problemCount], ['verl-rl', 20, 20, 0]);
  });

  it('converts the real MEDEC CSV to each TRL format, with extra fields for the reward function', async () => {
    const base: ConvertOptions = {
      mapping: {
        question: 'Text',
        answer: 'Error Flag',
        extra: ['Error Sentence', 'Corrected Sentence'],
        system: 'You review clinical notes.',
      },
    };
    const reader = await openDataset(host, MEDEC);
    const po = await convertDataset(reader, { ...base, format: 'trl-prompt-only' });
    assert.equal(po.train.length, 200);
    const first = po.train[0] as Record<string, unknown>;
    assert.deepEqual(Object.keys(first), ['prompt', 'solution', 'Error Sentence', 'Corrected Sentence']);
    assert.equal((first.prompt as { role: string }[])[0]!.role, 'system');
    const pc = await convertDataset(reader, { ...base, format: 'trl-prompt-completion' });
    assert.deepEqual((pc.train[0] as { completion: unknown }).completion, [{ role: 'assistant', content: '1' }]);
    const conv = await convertDataset(reader, { ...base, format: 'trl-conversational' });
    assert.deepEqual(
      (conv.train[0] as { messages: { role: string }[] }).messages.map((m) => m.role),
      ['system', 'user', 'assistant'],
    );
    const sft = await convertDataset(reader, { ...base, format: 'verl-sft' });
    assert.match((sft.train[0] as { prompt: string }).prompt, /^You review clinical notes\.\n\nA 24-year-old woman/);
    for (const [format, result] of [
      ['trl-prompt-only', po],
      ['trl-prompt-completion', pc],
      ['trl-conversational', conv],
      ['verl-sft', sft],
    ] as const) {
      const file = join(dir, `${format}.parquet`);
      await writeConverted(host, result, { out: file, split: false });
      const s = await inspectDataset(await openDataset(host, file), { maxPromptTokens: 4096 });
      assert.equal(s.kind, format, file);
      assert.equal(s.problemCount, 0, `${format}: ${JSON.stringify(s.problems.slice(0, 2))}`);
    }
  });

  it('reports rows with a missing or empty mapped field (row, field, reason) and converts the others', async () => {
    const file = join(dir, 'raw.jsonl');
    writeFileSync(
      file,
      [{ q: 'a', ans: 'yes' }, { q: 'b' }, { q: '', ans: 'no' }, { q: 'd', ans: 'maybe' }].map((r) => JSON.stringify(r)).join('\n') +
        '\n{bad\n',
    );
    const r = await convertDataset(await openDataset(host, file), {
      mapping: { question: 'q', answer: 'ans', template: 'Q: {q} ({missing})' },
    });
    assert.equal(r.train.length, 0, 'the template names a field no row has');
    const ok = await convertDataset(await openDataset(host, file), { mapping: { question: 'q', answer: 'ans' } });
    assert.deepEqual(
      ok.train.map((x) => (x.reward_model as { ground_truth: string }).ground_truth),
      ['yes', 'maybe'],
    );
    assert.deepEqual(
      ok.problems.map((p) => [p.row, p.line, p.field ?? null]),
      [
        [1, 2, 'ans'],
        [2, 3, 'q'],
        [4, 5, null],
      ],
    );
    assert.match(ok.problems[0]!.reason, /the answer field "ans" is missing or empty/);
  });
});
