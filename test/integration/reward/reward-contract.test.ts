import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { writeDemoDatasets } from '../../../src/core/demo/demo-datasets';
import { checkRewardContract, type ContractInputs } from '../../../src/core/runs/reward-contract';
import { rewardUpload } from '../../../src/core/runs/reward-files';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import type { Problem } from '../../../src/core/errors/located-error';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const host = new LocalHost();
const ws = mkdtempSync(join(tmpdir(), 'medrl-contract-'));
cpSync(join(ROOT, 'configs/rewards'), join(ws, 'configs/rewards'), { recursive: true });
mkdirSync(join(ws, 'r'));
mkdirSync(join(ws, 'data'));

/** A marker in every row's text: no problem may quote it (rows are medical data). */
const SECRET = 'PATIENT-7731';

function spec(path: string, framework: 'verl' | 'trl' = 'verl', fn = 'compute_score'): RunSpec {
  return { name: 't', framework, algorithm: 'grpo', model: 'm', data: { train: 'x' }, reward: { path, function: fn } } as RunSpec;
}
function rows(name: string, list: unknown[]): string {
  const file = join(ws, 'data', name);
  writeFileSync(file, list.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}
const verlRow = (gt: unknown, extra: Record<string, unknown> = {}) => ({
  data_source: 'medqa',
  prompt: [{ role: 'user', content: `Case ${SECRET}: what is it?` }],
  ability: 'medical',
  reward_model: { style: 'rule', ground_truth: gt },
  extra_info: { index: 0, question: `Case ${SECRET}`, ...extra },
});
const letters = rows(
  'letters.jsonl',
  ['A', 'B', 'C', 'D'].map((l) => verlRow(l)),
);

async function check(s: RunSpec, dataPath: string, more: Partial<ContractInputs> = {}): Promise<Problem[]> {
  const upload = more.upload ?? (await rewardUpload(ws, (s.reward as { path: string }).path, 'spec.yaml'));
  const problems = await checkRewardContract({
    host,
    spec: s,
    specFile: 'spec.yaml',
    upload,
    dataPath,
    workdir: ws,
    setup: [],
    env: {},
    secrets: {},
    ...more,
  });
  assert.ok(!JSON.stringify(problems).includes(SECRET), `a problem quotes row text: ${JSON.stringify(problems)}`);
  return problems;
}
function fn(name: string, code: string[]): string {
  writeFileSync(join(ws, 'r', name), code.join('\n') + '\n');
  return `r/${name}`;
}
const errors = (ps: Problem[]) => ps.filter((p) => p.severity === 'error');

describe('reward contract check before submit (real python3, local host)', () => {
  let demo: string;
  before(async () => {
    demo = join(ws, 'demo-data');
    await writeDemoDatasets(host, join(ROOT, 'demo'), demo);
  });

  it('the seed starters pass on the demo data the product generates (verl parquet)', async () => {
    assert.deepEqual(await check(spec('configs/rewards/multiple_choice_exact.py'), join(demo, 'data/pubmedqa/verl/train.parquet')), []);
    assert.deepEqual(await check(spec('configs/rewards/medec_error_detection.py'), join(demo, 'data/medec/verl/train.parquet')), []);
  });

  it('the seed starters pass on rows in their own shapes (MEDEC dict answers, exam lists, ECG closed and free text)', async () => {
    const medec = rows('medec.jsonl', [
      verlRow({ error_flag: 1, error_sentence_id: 3, corrected_sentence: 'Give aspirin.' }),
      verlRow({ error_flag: 0, error_sentence_id: -1, corrected_sentence: null }),
    ]);
    assert.deepEqual(await check(spec('configs/rewards/medec_error_detection.py'), medec), []);
    const exams = rows('exams.jsonl', [verlRow(['CBC', 'CT abdomen']), verlRow('ECG; troponin'), verlRow([])]);
    assert.deepEqual(await check(spec('configs/rewards/exam_recommendation_f1.py'), exams), []);
    const ecg = rows('ecg.jsonl', [
      verlRow('yes'),
      verlRow('B'),
      verlRow('ST elevation in leads II, III and aVF'),
      verlRow('Normal tracing'),
      verlRow('no', { method: 'rule' }),
    ]);
    // Without a judge: the free-text rows' reward raises, which kills verl's step: refused before submit, at that row.
    const noJudge = await check(spec('configs/rewards/ecg_qa_hybrid.py'), ecg);
    assert.equal(errors(noJudge).length, 1);
    assert.equal(noJudge.length, 1);
    assert.match(noJudge[0]!.message, /calls the judge, but the run has no judge \(MEDRL_JUDGE_URL\)/);
    assert.equal(noJudge[0]!.field, 'row 3');
  });

  describe('with the stand-in judge', () => {
    let judge: StandinServer;
    before(async () => {
      judge = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'jk']);
    });
    after(() => judge.stop());

    it("judge rewards pass with the run's judge env and key; a wrong key is an error; an unreachable judge a warning", async () => {
      const env = { MEDRL_JUDGE_URL: judge.url, MEDRL_JUDGE_MODEL: 'Judger' };
      const ecg = rows('ecg2.jsonl', [verlRow('yes'), verlRow('ST elevation in leads II, III and aVF'), verlRow('Normal tracing')]);
      assert.deepEqual(await check(spec('configs/rewards/ecg_qa_hybrid.py'), ecg, { env, secrets: { MEDRL_JUDGE_API_KEY: 'jk' } }), []);
      const dx = rows('dx.jsonl', [verlRow('Acute appendicitis'), verlRow('Gout')]);
      assert.deepEqual(await check(spec('configs/rewards/diagnosis_judge.py'), dx, { env, secrets: { MEDRL_JUDGE_API_KEY: 'jk' } }), []);
      const wrongKey = await check(spec('configs/rewards/diagnosis_judge.py'), dx, { env, secrets: { MEDRL_JUDGE_API_KEY: 'bad' } });
      assert.equal(wrongKey.length, 1);
      assert.equal(wrongKey[0]!.severity, 'error');
      assert.match(wrongKey[0]!.message, /judge refused the request \(HTTP 401\).*API key \(also rows 2\)/);
      const down = await check(spec('configs/rewards/diagnosis_judge.py'), dx, {
        env: { MEDRL_JUDGE_URL: 'http://127.0.0.1:9/v1', MEDRL_JUDGE_MODEL: 'J' },
      });
      assert.deepEqual(
        down.map((p) => p.severity),
        ['warning'],
      );
      assert.match(down[0]!.message, /did not answer at check time/);
    });
  });

  it('refuses what verl would crash on, naming the row and the fix', async () => {
    const none = await check(
      spec(
        fn('none.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return None if solution_str == "" else 1.0',
        ]),
      ),
      letters,
    );
    assert.equal(none.length, 1);
    assert.deepEqual([none[0]!.file, none[0]!.line, none[0]!.field, none[0]!.severity], [letters, 1, 'row 1', 'error']);
    assert.match(none[0]!.message, /with an empty answer, the reward function returned None: return a float.*\(also rows 2, 3, 4\)/);

    const keys = await check(
      spec(
        fn('keys.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return {"score": 1.0, "pred": solution_str} if solution_str else {"score": 0.0}',
        ]),
      ),
      letters,
    );
    assert.equal(keys.length, 1);
    assert.match(
      keys[0]!.message,
      /returned keys score, but row 1 \(ground truth\) returned pred, score: .*return the same keys for every sample/,
    );

    const noScore = await check(
      spec(
        fn('noscore.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return {"reward": 1.0}',
        ]),
      ),
      letters,
    );
    assert.match(noScore[0]!.message, /returned a dict without 'score' \(keys: reward\)/);

    const noneValue = await check(
      spec(
        fn('nonevalue.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return {"score": 0.0, "pred": solution_str or None, "hits": [1, 2]}',
        ]),
      ),
      letters,
    );
    assert.deepEqual(noneValue.map((p) => /returned (\w+=\w+)/.exec(p.message)?.[1]).sort(), ['hits=list', 'pred=None']);

    const mixed = await check(
      spec(
        fn('mixed.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return {"score": 1.0} if solution_str else 0.0',
        ]),
      ),
      letters,
    );
    assert.match(mixed[0]!.message, /returned a number, but row 1 \(ground truth\) returned a dict/);

    const types = await check(
      spec(
        fn('types.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    return {"score": 1.0, "n": len(solution_str) if solution_str else "none"}',
        ]),
      ),
      letters,
    );
    assert.match(types[0]!.message, /returned n as a string, but row 1 \(ground truth\) returned a number/);
  });

  it('refuses signatures the trainer cannot call and a function that does not load', async () => {
    const noExtra = await check(
      spec(fn('sig.py', ['def compute_score(data_source, solution_str, ground_truth):', '    return 1.0'])),
      letters,
    );
    assert.deepEqual([noExtra[0]!.field, noExtra[0]!.severity], ['reward.function', 'error']);
    assert.match(
      noExtra[0]!.message,
      /does not take extra_info, which verl passes by keyword.*def compute_score\(data_source, solution_str, ground_truth, extra_info=None, \*\*kwargs\)/,
    );
    const needs = await check(
      spec(fn('needs.py', ['def compute_score(data_source, solution_str, ground_truth, extra_info, tokenizer, **kw):', '    return 1.0'])),
      letters,
    );
    assert.match(needs[0]!.message, /needs tokenizer, which verl never passes: give it a default/);
    const trlOnVerl = await check(
      spec(fn('trlfn.py', ['def rewards(prompts, completions, **kw):', '    return [1.0 for _ in completions]']), 'verl', 'rewards'),
      letters,
    );
    assert.match(trlOnVerl[0]!.message, /is a TRL reward function .* but the spec trains with verl/);
    const broken = await check(
      spec(
        fn('broken.py', [
          'import no_such_module_here',
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None): return 1.0',
        ]),
      ),
      letters,
    );
    assert.deepEqual([broken[0]!.field, broken[0]!.severity], ['reward.path', 'error']);
    assert.match(broken[0]!.message, /ModuleNotFoundError: No module named 'no_such_module_here'/);
  });

  it('an exception names its line in the reward file but never its message when that may quote the row', async () => {
    const p = await check(
      spec(
        fn('raises.py', [
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    if not solution_str:',
          '        raise ValueError("bad answer for " + extra_info["question"])',
          '    return float(extra_info["missing_key"])',
        ]),
      ),
      letters,
    );
    assert.equal(p.length, 2);
    assert.match(p[0]!.message, /with the ground truth as the answer, the reward function raised KeyError: 'missing_key' at raises\.py:4/);
    assert.match(p[1]!.message, /with an empty answer, the reward function raised ValueError at raises\.py:3 \(its message is not shown/);
  });

  it('a worker that dies on a row, and a row that is not JSON, are errors at the row that never quote it', async () => {
    const dies = await check(
      spec(
        fn('dies.py', [
          'import os, sys',
          'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
          '    if not solution_str:',
          '        print("dying on", extra_info["question"], file=sys.stderr)',
          '        os._exit(3)',
          '    return 1.0',
        ]),
      ),
      letters,
    );
    assert.deepEqual(
      dies.map((p) => [p.field, p.severity]),
      [['row 1', 'error']],
    );
    assert.match(
      dies[0]!.message,
      /with an empty answer, the reward worker stopped \(exited with code 3\): this would stop the trainer too/,
    );
    const broken = join(ws, 'data', 'broken.jsonl');
    writeFileSync(broken, `${JSON.stringify(verlRow('A'))}\n{"data_source": "${SECRET}", oops\n`);
    const p = await check(spec('configs/rewards/multiple_choice_exact.py'), broken);
    assert.deepEqual(
      p.map((x) => [x.line, x.field, x.severity]),
      [[2, 'row 2', 'error']],
    );
    assert.match(p[0]!.message, /^cannot be read as a row/);
  });

  it('TRL: rows keep their columns; None is allowed; dicts and functions without **kwargs are refused', async () => {
    const trlRows = rows('trl.jsonl', [
      { prompt: [{ role: 'user', content: `Case ${SECRET}` }], solution: 'A' },
      { prompt: [{ role: 'user', content: `Case ${SECRET} again` }], solution: 'B' },
    ]);
    const ok = fn('trl_ok.py', [
      'def accuracy(prompts, completions, solution, **kwargs):',
      '    return [None if not c[0]["content"] else float(c[0]["content"] == s) for c, s in zip(completions, solution)]',
    ]);
    assert.deepEqual(await check(spec(ok, 'trl', 'accuracy'), trlRows), []);
    // TRL's usual input is a folder (--dataset_name): its train file's rows are tried.
    mkdirSync(join(ws, 'data/trl-folder'));
    writeFileSync(
      join(ws, 'data/trl-folder/train.jsonl'),
      JSON.stringify({ prompt: [{ role: 'user', content: `Case ${SECRET}` }] }) + '\n',
    );
    const folder = await check(spec(ok, 'trl', 'accuracy'), join(ws, 'data/trl-folder'));
    assert.equal(folder.length, 1, JSON.stringify(folder));
    assert.match(folder[0]!.message, /solution/, "the folder's rows were tried: the function needs a column they lack");
    const dicts = await check(
      spec(
        fn('trl_dict.py', ['def accuracy(prompts, completions, **kwargs):', '    return [{"score": 1.0} for _ in completions]']),
        'trl',
        'accuracy',
      ),
      trlRows,
    );
    assert.match(dicts[0]!.message, /returned a dict: TRL puts every reward function's values into a float tensor/);
    const scalar = await check(
      spec(fn('trl_scalar.py', ['def accuracy(prompts, completions, **kwargs):', '    return 1.0']), 'trl', 'accuracy'),
      trlRows,
    );
    assert.match(
      scalar[0]!.message,
      /returned a float: TRL calls it with a batch and needs a list with one float \(or None\) per completion/,
    );
    const noKw = await check(
      spec(
        fn('trl_nokw.py', ['def accuracy(prompts, completions, solution):', '    return [1.0 for _ in completions]']),
        'trl',
        'accuracy',
      ),
      trlRows,
    );
    assert.match(noKw[0]!.message, /does not take completion_ids, trainer_state, log_extra, log_metric, which trl passes by keyword/);
  });

  it('stays within its time budget and says how far it got; unreadable data is a warning at data.train', async () => {
    // 8 samples × 1 s cannot fit a 5 s budget on any machine (at 0.6 s each, a fast one tried all 8 in time).
    const slow = fn('slow.py', [
      'import time',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):',
      '    time.sleep(1.0)',
      '    return 1.0',
    ]);
    const upload = await rewardUpload(ws, slow, 'spec.yaml');
    const t0 = Date.now();
    const p = await check(spec(slow), letters, { budgetMs: 5000, upload });
    assert.ok(Date.now() - t0 < 6000, `took ${Date.now() - t0} ms`);
    assert.equal(p.length, 1, JSON.stringify(p));
    assert.match(p[0]!.message, /tried [1-7] of 8 samples: the check's 5 s ran out/);
    const missing = await check(spec('configs/rewards/multiple_choice_exact.py'), join(ws, 'data/nope.parquet'));
    assert.deepEqual([missing[0]!.field, missing[0]!.severity], ['data.train', 'warning']);
  });
});
