import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MAX_SAMPLE_LINE_BYTES, loadSamples, readSamples, rowToSample, sampleProblemLines } from '../../../src/core/reward/sample-source';
import { agreement, histogram, pearson } from '../../../src/core/reward/agreement';
import { cohenKappa } from '../../../src/core/review/agreement';
import { casesText, casesPathFor, checkCases } from '../../../src/core/reward/cases';

describe('reward samples from files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-samples-'));
  const host = new LocalHost();

  it('maps verl argument names, dump lines (output/gts/score) and dataset rows (response, reward_model, other columns)', () => {
    assert.deepEqual(rowToSample({ data_source: 'd', solution_str: 's', ground_truth: 'g', extra_info: { i: 1 } }), {
      data_source: 'd',
      solution_str: 's',
      ground_truth: 'g',
      extra_info: { i: 1 },
    });
    assert.deepEqual(rowToSample({ input: '<|im_start|>user Q', output: 'A', gts: 'B', score: 0.5, step: 2, acc: 0 }), {
      data_source: '',
      solution_str: 'A',
      ground_truth: 'B',
      extra_info: null,
      prompt: '<|im_start|>user Q',
      trainingScore: 0.5,
    });
    const row = rowToSample({
      data_source: 'pubmedqa',
      prompt: [{ role: 'user', content: 'Q' }],
      response: 'yes',
      reward_model: { style: 'rule', ground_truth: 'yes' },
      ability: 'medical',
      expected: 1,
    });
    assert.deepEqual(row, {
      data_source: 'pubmedqa',
      solution_str: 'yes',
      ground_truth: 'yes',
      extra_info: null,
      prompt: [{ role: 'user', content: 'Q' }],
      extra: { ability: 'medical' },
      expected: 1,
    });
    assert.equal(rowToSample({ completion: [{ role: 'assistant', content: 'B' }], solution: 'B' }).solution_str, 'B');
    assert.throws(() => rowToSample([1]), /a sample is a JSON object/);
  });

  it('reads JSONL with a problem per bad line (the rest kept), JSON arrays, and parquet', async () => {
    const jsonl = join(dir, 's.jsonl');
    writeFileSync(jsonl, '{"solution_str":"a","ground_truth":"a"}\n\nnot json\n{"x":1}\n{"output":"b","gts":"c","score":1}');
    const a = await loadSamples(host, jsonl);
    assert.deepEqual(
      a.samples.map((s) => s.solution_str),
      ['a', 'b'],
    );
    assert.deepEqual(a.rows, [1, 5]);
    assert.deepEqual(
      a.problems.map((p) => [p.line, p.message.slice(0, 20)]),
      [
        [3, 'malformed JSON: an u'],
        [4, 'no solution: a sampl'],
      ],
    );
    const json = join(dir, 's.json');
    writeFileSync(json, JSON.stringify({ samples: [{ response: 'x', ground_truth: 1 }, 5] }));
    const b = await loadSamples(host, json);
    assert.deepEqual([b.samples.length, b.problems[0]!.field, b.problems[0]!.message], [1, '[1]', 'a sample is a JSON object']);
    const pq = join(dir, 's.parquet');
    writeFileSync(
      pq,
      Buffer.from(
        parquetWriteBuffer({
          columnData: [
            { name: 'data_source', data: ['pubmedqa', 'pubmedqa'], type: 'STRING' },
            { name: 'response', data: ['<answer>yes</answer>', 'no'], type: 'STRING' },
            { name: 'ground_truth', data: ['yes', 'maybe'], type: 'STRING' },
            { name: 'step', data: [BigInt(3), BigInt(4)], type: 'INT64' },
          ],
        }),
      ),
    );
    const c = await loadSamples(host, pq);
    assert.deepEqual(
      c.samples.map((s) => [s.solution_str, s.ground_truth, s.extra?.step]),
      [
        ['<answer>yes</answer>', 'yes', 3],
        ['no', 'maybe', 4],
      ],
    );
    await assert.rejects(loadSamples(host, join(dir, 's.csv')), /samples are read from \.jsonl, \.json or \.parquet/);
  });

  it('reads one row at a time: a parquet file by row group (rows and --limit right across groups), a too-long JSONL line refused at its line', async () => {
    const pq = join(dir, 'groups.parquet');
    const n = 25;
    writeFileSync(
      pq,
      Buffer.from(
        parquetWriteBuffer({
          rowGroupSize: 10,
          columnData: [
            { name: 'response', data: Array.from({ length: n }, (_, i) => `r${i}`), type: 'STRING' },
            { name: 'ground_truth', data: Array.from({ length: n }, (_, i) => `g${i}`), type: 'STRING' },
          ],
        }),
      ),
    );
    const rows: Array<[number, string]> = [];
    for await (const r of readSamples(host, pq)) if ('sample' in r) rows.push([r.row, r.sample.solution_str]);
    assert.deepEqual(
      rows,
      Array.from({ length: n }, (_, i) => [i + 1, `r${i}`]),
    );
    const limited = await loadSamples(host, pq, { limit: 13 });
    assert.deepEqual([limited.samples.length, limited.samples.at(-1)!.ground_truth], [13, 'g12']);
    const jsonl = join(dir, 'long-line.jsonl');
    writeFileSync(
      jsonl,
      `{"solution_str":"a","ground_truth":"a"}\n{"solution_str":"${'x'.repeat(MAX_SAMPLE_LINE_BYTES)}"}\n{"solution_str":"b","ground_truth":"b"}\n`,
    );
    const got = await loadSamples(host, jsonl);
    assert.deepEqual(got.rows, [1, 3]);
    assert.deepEqual(
      got.problems.map((p) => [p.line, p.message]),
      [[2, 'this line is 8.0 MiB, more than the 8 MiB a sample may take: skipped']],
    );
  });

  it('a training dataset (prompts, no answers) gets one sentence saying where answers come from, not a problem per row', async () => {
    const host = new LocalHost();
    const dir = mkdtempSync(join(tmpdir(), 'medrl-samples-'));
    const rows = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ data_source: 'pubmedqa', prompt: [{ role: 'user', content: `q${i}` }], reward_model: { ground_truth: 'yes' } }),
      ).join('\n');
    writeFileSync(join(dir, 'train.jsonl'), rows(20));
    const format = (p: { line?: number; message: string }) => `${p.line}: ${p.message}`;
    const prompts = await loadSamples(host, join(dir, 'train.jsonl'));
    assert.deepEqual(sampleProblemLines('data/train.jsonl', prompts, format), [
      'data/train.jsonl: its 20 row(s) are prompts with no answer to score (no solution_str, output, response or completion). ' +
        `Score a run's answers with "MedRL: Back-test a Reward Function on a Run's Rollouts", load a rollout dump, or add a sample by hand.`,
    ]);
    // Some rows with answers: each problem row keeps its own line.
    writeFileSync(join(dir, 'mixed.jsonl'), `${rows(1)}\n{"solution_str":"yes","ground_truth":"yes"}\n`);
    const mixed = await loadSamples(host, join(dir, 'mixed.jsonl'));
    const lines = sampleProblemLines('mixed.jsonl', mixed, format);
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^1: no solution: a sample needs solution_str/);
  });
});

describe('agreement between two scorers', () => {
  it("Pearson r and Cohen's kappa match hand-computed values", () => {
    assert.equal(pearson([1, 2, 3], [2, 4, 6]), 1);
    assert.ok(Math.abs(pearson([1, 2, 3, 4], [1, 3, 2, 4])! - 0.8) < 1e-12);
    assert.equal(pearson([1, 1, 1], [0, 1, 2]), null, 'constant side: undefined, not NaN');
    // 2x2 table: both pass 20, both fail 15, a-only 5, b-only 10 (n=50): po = .7, pe = .5*.6 + .5*.4 = .5, kappa = .4
    const a = [...Array(20).fill(true), ...Array(15).fill(false), ...Array(5).fill(true), ...Array(10).fill(false)];
    const b = [...Array(20).fill(true), ...Array(15).fill(false), ...Array(5).fill(false), ...Array(10).fill(true)];
    assert.ok(Math.abs(cohenKappa(a, b).kappa! - 0.4) < 1e-12);
    assert.equal(cohenKappa([true, true], [true, true]).kappa, 1);
  });

  it('leaves out unscored samples, lists disagreements at the threshold, and bins a histogram', () => {
    const r = agreement([1, 0.2, null, 0.9, 0.6], [0.8, 0.7, 1, 0.1, 0.55], 0.5);
    assert.deepEqual([r.n, r.missing, r.disagreements, r.agreement], [4, 1, [1, 3], 0.5]);
    assert.deepEqual(histogram([0, 0, 1, 0.5, null], 2), { edges: [0, 0.5, 1], counts: [2, 2] });
    assert.deepEqual(histogram([1, 1], 2).counts, [0, 2]);
  });
});

describe('regression cases', () => {
  it('live next to the function and pass when the score matches', () => {
    assert.equal(casesPathFor('/w/reward_fn.py'), '/w/reward_fn.cases.jsonl');
    const text = casesText([
      { data_source: 'd', solution_str: 's', ground_truth: 'g', expected: 1 },
      { data_source: 'd', solution_str: 'unmarked', ground_truth: 'g' },
    ]);
    assert.deepEqual(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [{ data_source: 'd', solution_str: 's', ground_truth: 'g', extra_info: null, expected: 1 }],
    );
    const out = checkCases(
      [
        { data_source: '', solution_str: '', ground_truth: '', expected: 1 },
        { data_source: '', solution_str: '', ground_truth: '', expected: 0 },
      ],
      [
        { index: 0, score: 1, detail: null, error: null, latencyMs: 1 },
        { index: 1, score: null, detail: null, error: 'boom', latencyMs: 1 },
      ],
    );
    assert.deepEqual(
      out.map((o) => [o.pass, o.error]),
      [
        [true, null],
        [false, 'boom'],
      ],
    );
  });
});
