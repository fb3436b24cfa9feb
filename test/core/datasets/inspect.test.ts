import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import { detectKind } from '../../../src/core/datasets/dataset-kinds';
import { inspectDataset, trainSiblingPath } from '../../../src/core/datasets/inspect-dataset';
import { rowsToJsonl, rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { rowAndField } from '../../../src/core/format/row-line';

const rl = (q: string, gt: unknown = 'yes', source = 'pubmedqa') => ({
  data_source: source,
  prompt: [{ role: 'user', content: q }],
  ability: 'medical',
  reward_model: { style: 'rule', ground_truth: gt },
  extra_info: { split: 'train', index: 0 },
});

describe('dataset kinds and validation', () => {
  const host = new LocalHost();
  const dir = mkdtempSync(join(tmpdir(), 'medrl-inspect-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('tells each trainer format from its columns', () => {
    assert.equal(detectKind([rl('q')]), 'verl-rl');
    assert.equal(detectKind([{ prompt: 'q', response: 'a' }]), 'verl-sft');
    assert.equal(detectKind([{ prompt: [{ role: 'user', content: 'q' }] }]), 'trl-prompt-only');
    assert.equal(
      detectKind([
        {
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
          ],
        },
      ]),
      'trl-conversational',
    );
    assert.equal(detectKind([{ prompt: 'q', completion: 'a' }]), 'trl-prompt-completion');
    assert.equal(detectKind([{ prompt: 'q', chosen: 'a', rejected: 'b' }]), 'dpo-preference');
    assert.equal(detectKind([{ QUESTION: 'q', final_decision: 'yes' }]), 'raw');
    // The most common shape wins: one odd row does not change the kind.
    assert.equal(detectKind([rl('a'), rl('b'), { foo: 1 }]), 'verl-rl');
  });

  it('reports wrong types and missing fields with row, line and field; counts the rows that are fine', async () => {
    const rows: unknown[] = [
      rl('fine one'),
      rl('fine two'),
      { ...rl('bad role'), prompt: [{ role: 'doctor', content: 'x' }] },
      { ...rl('no gt'), reward_model: undefined },
      { ...rl('number prompt'), prompt: 42 },
      { ...rl('no source'), data_source: undefined },
    ];
    const file = join(dir, 'rl.jsonl');
    writeFileSync(file, rowsToJsonl(rows));
    const s = await inspectDataset(await openDataset(host, file), { against: null });
    assert.equal(s.kind, 'verl-rl');
    assert.equal(s.rows, 6);
    assert.equal(s.rowsOk, 2);
    const got = s.problems.map((p) => [p.row, p.line, p.field, p.severity]);
    assert.deepEqual(got, [
      [2, 3, 'prompt[0].role', 'error'],
      [3, 4, 'reward_model', 'error'],
      [4, 5, 'prompt', 'error'],
      [5, 6, 'data_source', 'error'],
    ]);
    assert.deepEqual(
      s.problems.map((p) => `${rowAndField(p)}: ${p.reason}`),
      [
        'row 3, prompt[0].role: must be one of system, user, assistant, tool (got "doctor")',
        'row 4, reward_model: missing: expected a mapping with style, ground_truth',
        'row 5, prompt: must be a list of chat messages ({role, content}) (got 42)',
        'row 6, data_source: missing: expected text',
      ],
    );
    assert.deepEqual(s.dataSources, { pubmedqa: 5 });
  });

  it('a field missing inside a nested list, or a missing ground truth, says where and what should be there', async () => {
    const rows: unknown[] = [
      { ...rl('no content'), prompt: [{ role: 'system', content: 'Be brief.' }, { role: 'user' }] },
      { ...rl('no gt'), reward_model: { style: 'rule' } },
      { ...rl('text prompt'), prompt: 'What is the dose?' },
    ];
    const file = join(dir, 'nested.jsonl');
    writeFileSync(file, rowsToJsonl(rows));
    const s = await inspectDataset(await openDataset(host, file), { against: null });
    assert.deepEqual(
      s.problems.map((p) => `${rowAndField(p)}: ${p.reason}`),
      [
        'row 1, prompt[1].content: missing: expected text',
        'row 2, reward_model.ground_truth: missing: expected the reference answer (text, a number, a list or a mapping)',
        'row 3, prompt: must be a list of chat messages ({role, content}) (got "What is the dose?")',
      ],
    );
    const trl = join(dir, 'trl.jsonl');
    writeFileSync(trl, rowsToJsonl([{ prompt: [{ role: 'user', content: 'q' }, { content: 'a' }], completion: 'x' }, { completion: 'y' }]));
    const t = await inspectDataset(await openDataset(host, trl), { kind: 'trl-prompt-completion', against: null });
    assert.deepEqual(
      t.problems.map((p) => `${rowAndField(p)}: ${p.reason}`),
      [
        'row 1, prompt[1].role: missing: expected one of system, user, assistant, tool',
        'row 2, prompt: missing: expected text or a list of chat messages ({role, content})',
      ],
    );
  });

  it('finds empty ground truths, duplicate prompts and prompts over the token budget (characters / 4)', async () => {
    const long = 'word '.repeat(500); // 2500 characters: about 625 tokens
    const rows = [rl('q1'), rl('q2', ''), rl('q1'), rl(long), rl('q3', null)];
    const file = join(dir, 'checks.parquet');
    writeFileSync(file, rowsToParquet(rows));
    const s = await inspectDataset(await openDataset(host, file), { maxPromptTokens: 512, against: null });
    const by = (re: RegExp) => s.problems.filter((p) => re.test(p.reason)).map((p) => p.row);
    assert.deepEqual(by(/empty ground truth/), [1, 4]);
    assert.deepEqual(by(/duplicate prompt: the same as row 1$/), [2]);
    assert.deepEqual(by(/about 625 tokens \(2500 characters \/ 4\), over the budget of 512/), [3]);
    assert.equal(s.rowsOk, 1);
    assert.deepEqual(s.tokenBudget, { maxPromptTokens: 512, estimate: 'chars/4' });
  });

  it('finds train/validation overlap: a test split row whose prompt is in train.EXT beside it', async () => {
    const split = join(dir, 'split');
    mkdirSync(split);
    writeFileSync(join(split, 'train.parquet'), rowsToParquet([rl('a'), rl('b'), rl('c')]));
    writeFileSync(join(split, 'test.parquet'), rowsToParquet([rl('x'), rl('b'), rl('y')]));
    assert.equal(trainSiblingPath(join(split, 'test.parquet')), join(split, 'train.parquet'));
    assert.equal(trainSiblingPath(join(split, 'medec_val.parquet')), join(split, 'medec_train.parquet'));
    const s = await inspectDataset(await openDataset(host, join(split, 'test.parquet')));
    assert.equal(s.comparedWith, join(split, 'train.parquet'));
    assert.deepEqual(
      s.problems.map((p) => [p.row, p.reason]),
      [[1, 'train/validation overlap: the same prompt is row 2 of train.parquet']],
    );
    const train = await inspectDataset(await openDataset(host, join(split, 'train.parquet')));
    assert.equal(train.problemCount, 0, 'the training split is not compared with itself');
  });

  it('malformed lines are problems at their lines, and the other rows are still checked', async () => {
    const file = join(dir, 'mixed.jsonl');
    writeFileSync(file, `${JSON.stringify({ prompt: 'q', completion: 'a' })}\n{oops\n${JSON.stringify({ prompt: 'q2', completion: 7 })}\n`);
    const s = await inspectDataset(await openDataset(host, file), { against: null });
    assert.equal(s.kind, 'trl-prompt-completion');
    assert.deepEqual(
      s.problems.map((p) => [p.row, p.line, p.field ?? null]),
      [
        [1, 2, null],
        [2, 3, 'completion'],
      ],
    );
    assert.match(s.problems[0]!.reason, /line 2 \(byte offset 32\): malformed JSON/);
    assert.equal(s.rowsOk, 1);
  });
});
