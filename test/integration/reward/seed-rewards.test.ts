import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RewardRunner } from '../../../src/core/reward/reward-runner';
import { localHarnessPath } from '../../../src/core/reward/staging';
import type { RewardSample } from '../../../src/core/scoring/sample';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const REWARDS = join(ROOT, 'configs/rewards');
const runners: RewardRunner[] = [];
after(() => runners.forEach((r) => r.dispose()));
function fn(file: string, env?: Record<string, string>): RewardRunner {
  const r = new RewardRunner({
    host: new LocalHost(),
    harnessPath: localHarnessPath(),
    fnPath: join(REWARDS, file),
    env,
    timeoutMs: 20_000,
  });
  runners.push(r);
  return r;
}

/** The real MEDEC-MS rows shipped in demo/data (CSV with quoted multi-line fields). */
function medecRows(): Array<Record<string, string>> {
  const text = readFileSync(join(ROOT, 'demo/data/medec/medec-ms-validation-first200.csv'), 'utf8');
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field.replace(/\r$/, ''));
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) rows.push([...row, field]);
  const [header, ...data] = rows;
  return data.filter((r) => r.length === header!.length).map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

// The DiagAgent seed's answer format (diagagent-fork examples/diagnose.py INSTRUCTION): asking turns, then the final answer.
const SEED_ASK_CBC =
  "Current diagnosis: Gastroenteritis\nBased on the patient's initial presentation, the following investigation(s) should be performed: Complete blood count\nReason: To look for leukocytosis.";
const SEED_ASK_US =
  "Current diagnosis: Acute appendicitis\nBased on the patient's initial presentation, the following investigation(s) should be performed: Abdominal ultrasound.\nReason: To image the appendix.";
const seedFinal = (dx: string) =>
  `The available information is sufficient to make a diagnosis. \n\nDiagnosis: ${dx}\nReason: Right lower quadrant pain, leukocytosis and a non-compressible appendix.`;
/** A multi-turn transcript as verl's decoded dump shows it: each tool answer as a user turn between assistant turns. */
const seedTranscript = (...turns: string[]) =>
  turns.join('\nuser\nHere is the test result: WBC 15.2 x10^9/L, neutrophils 85%.\nassistant\n');

describe('seed-task reward functions on the real samples', () => {
  it('multiple-choice exact match: 200 PubMedQA questions, right answers 1, wrong ones 0, in three answer styles', async () => {
    const data = JSON.parse(readFileSync(join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json'), 'utf8')) as Record<
      string,
      { LONG_ANSWER: string; final_decision: string }
    >;
    const rows = Object.values(data);
    assert.equal(rows.length, 200);
    const wrong: Record<string, string> = { yes: 'no', no: 'maybe', maybe: 'yes' };
    const samples: RewardSample[] = rows.flatMap((r, i) => {
      const gt = r.final_decision;
      const base = { data_source: 'pubmedqa', ground_truth: gt, extra_info: { index: i } };
      return [
        { ...base, solution_str: `${r.LONG_ANSWER}\n<answer>${gt}</answer>` },
        { ...base, solution_str: `${r.LONG_ANSWER}\nThe answer is ${gt[0]!.toUpperCase()}${gt.slice(1)}.` },
        { ...base, solution_str: `${r.LONG_ANSWER}\n<answer>${wrong[gt]}</answer>` },
      ];
    });
    const res = await fn('multiple_choice_exact.py').run(samples);
    assert.ok(res.every((r) => r.error === null));
    assert.deepEqual(
      res.map((r) => r.score),
      rows.flatMap(() => [1, 1, 0]),
    );
    assert.deepEqual([res[0]!.detail!.format, res[1]!.detail!.format], [1, 0]);
    const letters = await fn('multiple_choice_exact.py').run([
      { data_source: 'medqa', solution_str: 'Reasoning...\nAnswer: (B) Aspirin', ground_truth: 'B' },
      { data_source: 'medqa', solution_str: 'C.', ground_truth: 'B' },
    ]);
    assert.deepEqual(
      letters.map((r) => r.score),
      [1, 0],
    );
  });

  it('MEDEC error detection: 200 real notes, flag + sentence + correction, both answer forms', async () => {
    const rows = medecRows();
    assert.equal(rows.length, 200);
    const truth = (r: Record<string, string>) => ({
      error_flag: Number(r['Error Flag']),
      error_sentence_id: Number(r['Error Sentence ID']),
      corrected_sentence: r['Corrected Sentence'] === 'NA' ? null : r['Corrected Sentence'],
    });
    const samples: RewardSample[] = [];
    const expected: number[] = [];
    for (const r of rows) {
      const gt = truth(r);
      const base = { data_source: 'medec', ground_truth: gt, extra_info: { text_id: r['Text ID'] } };
      if (gt.error_flag === 1) {
        samples.push(
          { ...base, solution_str: `Error: yes\nSentence: ${gt.error_sentence_id}\nCorrection: ${gt.corrected_sentence}` },
          { ...base, solution_str: `${gt.error_sentence_id} ${gt.corrected_sentence}` },
          { ...base, solution_str: 'CORRECT' },
          { ...base, solution_str: `Error: yes\nSentence: ${gt.error_sentence_id + 1}\nCorrection: ${r['Error Sentence']}` },
        );
        expected.push(1, 1, 0, NaN);
      } else {
        samples.push({ ...base, solution_str: 'CORRECT' }, { ...base, solution_str: 'Error: yes\nSentence: 0\nCorrection: something' });
        expected.push(1, 0);
      }
    }
    const res = await fn('medec_error_detection.py').run(samples);
    assert.ok(
      res.every((r) => r.error === null),
      res.find((r) => r.error)?.error ?? '',
    );
    res.forEach((r, i) => {
      if (Number.isNaN(expected[i])) {
        // Flagged, wrong sentence, the erroneous sentence as "correction": 0.4 plus partial word overlap, below 0.7.
        assert.ok(r.score! >= 0.4 && r.score! < 0.7, `sample ${i}: ${r.score}`);
      } else assert.equal(r.score, expected[i], `sample ${i}: ${samples[i]!.solution_str.slice(0, 80)}`);
    });
    assert.equal(rows.filter((r) => r['Error Flag'] === '1').length, 109);
    // The same answers against the rows as MedRL's converter writes MEDEC (the demo's data/medec/verl): the flag as the
    // ground truth, the sentence id and correction in extra_info under their CSV names; plus the demo prompt's <answer> tag.
    const byRow = new Map(rows.map((r) => [r['Text ID'], r]));
    const converted = samples.map((x) => {
      const r = byRow.get((x.extra_info as { text_id: string }).text_id)!;
      return {
        ...x,
        ground_truth: r['Error Flag'],
        extra_info: { 'Error Sentence ID': r['Error Sentence ID'], 'Corrected Sentence': r['Corrected Sentence'] },
      };
    });
    assert.deepEqual(
      (await fn('medec_error_detection.py').run(converted)).map((r) => r.score),
      res.map((r) => r.score),
    );
    const tagged = await fn('medec_error_detection.py').run([
      {
        data_source: 'medec',
        solution_str: 'Reasoning.\n<answer>0</answer>',
        ground_truth: '0',
        extra_info: { 'Error Sentence ID': '-1', 'Corrected Sentence': 'NA' },
      },
      {
        data_source: 'medec',
        solution_str: '<answer>1</answer>\nSentence: 2\nCorrection: Give aspirin.',
        ground_truth: '1',
        extra_info: { 'Error Sentence ID': '2', 'Corrected Sentence': 'Give aspirin.' },
      },
    ]);
    assert.deepEqual(
      tagged.map((r) => r.score),
      [1, 1],
    );
    // Every sample has the same keys, none None (verl's validation averages each key over all samples).
    assert.deepEqual(
      new Set(res.map((r) => Object.keys(r.detail!).sort().join())),
      new Set(['correction_f1,format,pred_correction,pred_flag,pred_sentence,score,sentence_ok']),
    );
    assert.ok(res.every((r) => Object.values(r.detail!).every((v) => v !== null)));
  });

  it('examination recommendation set F1 (hand-written fictional cases), with abbreviations and list styles', async () => {
    const res = await fn('exam_recommendation_f1.py').run([
      {
        data_source: 'diagagent',
        solution_str: 'Reasoning.\n<exams>CBC; CT abdomen; urinalysis</exams>',
        ground_truth: ['Complete blood count', 'Computed tomography abdomen', 'Urinalysis'],
      },
      {
        data_source: 'diagagent',
        solution_str: 'Recommended examinations:\n1. ECG\n2. Troponin\n3. Chest X-ray\n4. D-dimer',
        ground_truth: 'electrocardiogram; troponin',
      },
      { data_source: 'diagagent', solution_str: 'No tests needed.', ground_truth: ['troponin'] },
    ]);
    assert.deepEqual(
      res.map((r) => r.score),
      [1, (2 * 0.5 * 1) / 1.5, 0],
    );
    // Joined strings, not lists: verl makes every extra key an array and averages it (lists of different lengths crash it).
    assert.equal(res[1]!.detail!.extra, 'chest x ray; d dimer');
    // The DiagAgent seed's asking turns ("... should be performed: X") are recommendations too.
    const seed = await fn('exam_recommendation_f1.py').run([
      {
        data_source: 'diagagent',
        solution_str: seedTranscript(SEED_ASK_CBC, SEED_ASK_US, seedFinal('Acute appendicitis')),
        ground_truth: ['CBC', 'Abdominal ultrasound'],
      },
      {
        data_source: 'diagagent',
        solution_str: seedTranscript(SEED_ASK_CBC, SEED_ASK_US),
        ground_truth: ['Complete blood count', 'CT abdomen'],
      },
      { data_source: 'diagagent', solution_str: 'The next test needed: chest X-ray.', ground_truth: ['chest x-ray'] },
    ]);
    assert.deepEqual(
      seed.map((r) => r.score),
      [1, 0.5, 1],
    );
    assert.equal(seed[1]!.detail!.extra, 'abdominal ultrasound');
  });

  describe('with the stand-in judge', () => {
    let judge: StandinServer;
    before(async () => {
      judge = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'jk', '--latency-ms', '20', '--retry-after', '0.1']);
    });
    after(() => judge.stop());
    const env = () => ({ MEDRL_JUDGE_URL: judge.url, MEDRL_JUDGE_MODEL: 'Judger', MEDRL_JUDGE_API_KEY: 'jk' });

    it('diagnosis judged by an LLM: matches, mismatches, retries a 429, and says when no judge is set', async () => {
      const res = await fn('diagnosis_judge.py', env()).run([
        {
          data_source: 'diagagent',
          solution_str: 'The picture fits.\nFinal diagnosis: acute appendicitis',
          ground_truth: 'Acute appendicitis',
        },
        {
          data_source: 'diagagent',
          solution_str: '<diagnosis>Community-acquired pneumonia</diagnosis>',
          ground_truth: 'Pulmonary embolism',
        },
        { data_source: 'diagagent', solution_str: '<diagnosis>gout [[standin-fault:429x1]]</diagnosis>', ground_truth: 'gout' },
        { data_source: 'diagagent', solution_str: '', ground_truth: 'gout' },
      ]);
      assert.deepEqual(
        res.map((r) => [r.score, r.error]),
        [
          [1, null],
          [0, null],
          [1, null],
          [0, null],
        ],
      );
      assert.match(String(res[0]!.detail!.judge_raw), /"label": "correct"/);
      const noJudge = await fn('diagnosis_judge.py').run([
        { data_source: 'd', solution_str: 'Final diagnosis: gout', ground_truth: 'gout' },
      ]);
      assert.match(noJudge[0]!.error!, /RuntimeError: MEDRL_JUDGE_URL is not set/);
      const noModel = await fn('diagnosis_judge.py', { MEDRL_JUDGE_URL: judge.url }).run([
        { data_source: 'd', solution_str: 'Final diagnosis: gout', ground_truth: 'gout' },
      ]);
      assert.match(noModel[0]!.error!, /RuntimeError: MEDRL_JUDGE_MODEL is not set/);
      const wrongKey = await fn('diagnosis_judge.py', { ...env(), MEDRL_JUDGE_API_KEY: 'bad' }).run([
        { data_source: 'd', solution_str: 'Final diagnosis: gout', ground_truth: 'gout' },
      ]);
      assert.match(wrongKey[0]!.error!, /judge HTTP 401.*\(check MEDRL_JUDGE_API_KEY\)/);
      assert.deepEqual(
        res.map((r) => Object.keys(r.detail!).sort().join()),
        Array(4).fill('judge_ok,judge_raw,pred,score'),
      );
    });

    it("diagnosis judged by an LLM reads the DiagAgent seed's answer format, not its Reason line", async () => {
      const transcript = seedTranscript(SEED_ASK_CBC, SEED_ASK_US, seedFinal('Acute appendicitis'));
      const res = await fn('diagnosis_judge.py', env()).run([
        { data_source: 'diagagent', solution_str: seedFinal('Acute appendicitis'), ground_truth: 'Acute appendicitis' },
        { data_source: 'diagagent', solution_str: seedFinal('Acute appendicitis'), ground_truth: 'Pulmonary embolism' },
        { data_source: 'diagagent', solution_str: transcript, ground_truth: 'Acute appendicitis' },
        // Without the sentence: the last "Diagnosis:" line (not "Current diagnosis:"), stopping before "Reason:".
        {
          data_source: 'diagagent',
          solution_str: 'Current diagnosis: Gastroenteritis\nDiagnosis: Acute appendicitis Reason: pain.\nReason: more pain.',
          ground_truth: 'Acute appendicitis',
        },
        // The last-line fallback skips Reason: lines.
        { data_source: 'diagagent', solution_str: 'Acute appendicitis\nReason: pain and fever.', ground_truth: 'Acute appendicitis' },
      ]);
      assert.deepEqual(
        res.map((r) => [r.score, r.detail!.pred, r.error]),
        [
          [1, 'Acute appendicitis', null],
          [0, 'Acute appendicitis', null],
          [1, 'Acute appendicitis', null],
          [1, 'Acute appendicitis', null],
          [1, 'Acute appendicitis', null],
        ],
      );
    });

    it('ECG QA: closed answers by rule, free text by rule + judge (0-10), method from extra_info', async () => {
      const ref = 'ST elevation in leads II, III and aVF: inferior STEMI';
      const res = await fn('ecg_qa_hybrid.py', env()).run([
        { data_source: 'ecg_expert_qa', solution_str: 'Reasoning...\n<answer>yes</answer>', ground_truth: 'yes' },
        {
          data_source: 'ecg_expert_qa',
          solution_str: 'There is ST elevation in leads II, III and aVF, an inferior STEMI.',
          ground_truth: ref,
        },
        { data_source: 'ecg_expert_qa', solution_str: 'Normal sinus rhythm.', ground_truth: ref },
        { data_source: 'ecg_expert_qa', solution_str: 'Normal sinus rhythm.', ground_truth: ref, extra_info: { method: 'rule' } },
      ]);
      assert.ok(
        res.every((r) => r.error === null),
        res.map((r) => r.error).join(' | '),
      );
      // Every sample has the same keys, none None (verl's validation averages each key over all samples).
      assert.deepEqual(
        res.map((r) => Object.keys(r.detail!).sort().join()),
        Array(4).fill('judge,judge_raw,judge_used,rule,rule_used,score'),
      );
      assert.deepEqual([res[0]!.score, res[0]!.detail!.judge, res[0]!.detail!.judge_used], [1, 0, 0]);
      assert.equal(res[1]!.detail!.rule, 1);
      assert.ok((res[1]!.detail!.judge as number) >= 0.5 && res[1]!.score! >= 0.75);
      assert.equal(res[2]!.detail!.rule, 0);
      assert.ok(res[2]!.score! < 0.5);
      assert.deepEqual([res[3]!.score, res[3]!.detail!.judge_raw, res[3]!.detail!.judge_used], [0, '', 0]);
    });
  });

  describe("the DiagAgent seed's reward (diagagent_reward.py) with a rule-answering stand-in judge", () => {
    let judge: StandinServer;
    before(async () => {
      judge = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'jk'], {
        answers: [
          // "Incorrect" must count as wrong (the seed's `'correct' in response.lower()` counts it as correct).
          { pattern: '\\[gt_diag\\]\\nGout$', reply: 'Incorrect' },
          // Correct when the judged text (the seed keeps the "Diagnosis:" label) names the reference exactly.
          { pattern: '\\[pred_diag\\]\\n(?:Diagnosis:\\s*)?(.+?)\\n\\n\\[gt_diag\\]\\n\\1$', reply: 'Correct' },
          { pattern: '\\[pred_diag\\]', reply: 'Wrong' },
          { pattern: 'how many of the recommended exams appear in the key exam list', reply: '2' },
          { pattern: 'how many of the key exams appear in the recommended exam list', reply: 'Matches: 1' },
        ],
      });
    });
    after(() => judge.stop());
    const env = (extra: Record<string, string> = {}) => ({
      MEDRL_JUDGE_URL: judge.url,
      MEDRL_JUDGE_MODEL: 'Judger',
      MEDRL_JUDGE_API_KEY: 'jk',
      ...extra,
    });
    const KEYS = 'dialogue_complete_reward,exam_f1,exam_recommendation_reward,exams,judge_ok,outcome_accuracy_reward,pred,score';
    const keyExams = ['Complete blood count', 'CT abdomen'];
    const sample = (solution: string, gt: string, extra: Record<string, unknown> = {}): RewardSample => ({
      data_source: 'diagagent',
      solution_str: solution,
      ground_truth: gt,
      extra_info: { key_exam_names: keyExams, ...extra },
    });
    const full = (dx: string) => seedTranscript(SEED_ASK_CBC, SEED_ASK_US, seedFinal(dx));
    const sameShape = (res: Array<{ detail: Record<string, unknown> | null }>) => {
      assert.deepEqual(
        res.map((r) => Object.keys(r.detail!).sort().join()),
        Array(res.length).fill(KEYS),
      );
      for (const key of KEYS.split(',')) {
        assert.equal(new Set(res.map((r) => typeof r.detail![key])).size, 1, key);
        assert.ok(
          res.every((r) => r.detail![key] !== null),
          key,
        );
      }
    };

    it('completion 0.1 + judge verdict + 0.5 x LLM-matched exam F1, as the seed scores a three-turn transcript', async () => {
      // Counts 2 of 2 recommended (precision 1) and 1 of 2 key exams (recall 0.5).
      const f1 = (2 * 1 * 0.5) / (1 + 0.5);
      const res = await fn('diagagent_reward.py', env()).run([
        sample(full('Acute appendicitis'), 'Acute appendicitis'),
        sample(full('Acute appendicitis'), 'Pulmonary embolism'),
        sample(full('Gout'), 'Gout'),
        // Incomplete dialogue: no verdict asked (the fault marker would fail that call), exams still scored.
        sample(seedTranscript(SEED_ASK_CBC, SEED_ASK_US), 'Acute appendicitis [[standin-fault:401]]'),
        // The agent loop's examination_history wins over the transcript; the count 2 is clamped to the list's length 1.
        sample(full('Acute appendicitis'), 'Acute appendicitis', { examination_history: ['CT abdomen'] }),
        // No key exams and none asked: F1 1.0 without a judge call, as the seed.
        {
          data_source: 'diagagent',
          solution_str: seedFinal('Acute appendicitis'),
          ground_truth: 'Acute appendicitis',
          extra_info: { key_exam_names: [] },
        },
      ]);
      assert.ok(
        res.every((r) => r.error === null),
        res.map((r) => r.error).join(' | '),
      );
      assert.deepEqual(
        res.map((r) => r.score),
        [0.1 + 1 + 0.5 * f1, 0.1 + 0 + 0.5 * f1, 0.1 + 0 + 0.5 * f1, 0 + 0 + 0.5 * f1, 0.1 + 1 + 0.5 * f1, 0.1 + 1 + 0.5 * 1],
      );
      assert.deepEqual(res[0]!.detail, {
        score: 0.1 + 1 + 0.5 * f1,
        dialogue_complete_reward: 0.1,
        outcome_accuracy_reward: 1,
        exam_recommendation_reward: 0.5 * f1,
        exam_f1: f1,
        pred: 'Diagnosis: Acute appendicitis',
        exams: 'Complete blood count; Abdominal ultrasound',
        judge_ok: 1,
      });
      assert.deepEqual(
        [res[1], res[2]].map((r) => [r!.detail!.outcome_accuracy_reward, r!.detail!.judge_ok]),
        [
          [0, 1],
          [0, 1],
        ],
      );
      assert.deepEqual(
        [res[3]!.detail!.dialogue_complete_reward, res[3]!.detail!.outcome_accuracy_reward, res[3]!.detail!.pred],
        [0, 0, ''],
      );
      assert.equal(res[4]!.detail!.exams, 'CT abdomen');
      assert.equal(res[5]!.detail!.exam_f1, 1);
      sameShape(res);
    });

    it('MEDRL_EXAM_MATCH=direct: exact lower-cased matching without count calls; judge errors and missing key exams raise', async () => {
      const direct = await fn('diagagent_reward.py', env({ MEDRL_EXAM_MATCH: 'direct' })).run([
        // 1 of 2 asked is a key exam, 1 of 2 key exams asked: F1 0.5 (the LLM counts would give 2/3).
        sample(full('Acute appendicitis'), 'Acute appendicitis'),
        sample(full('Acute appendicitis'), 'Acute appendicitis', { examination_history: [' complete BLOOD count', 'ct abdomen'] }),
        sample(seedTranscript(SEED_ASK_CBC), 'Acute appendicitis'),
      ]);
      assert.ok(
        direct.every((r) => r.error === null),
        direct.map((r) => r.error).join(' | '),
      );
      assert.deepEqual(
        direct.map((r) => [r.score, r.detail!.exam_f1]),
        [
          [0.1 + 1 + 0.5 * 0.5, 0.5],
          [0.1 + 1 + 0.5 * 1, 1],
          [0 + 0 + 0.5 * ((2 * 1 * 0.5) / (1 + 0.5)), (2 * 1 * 0.5) / (1 + 0.5)],
        ],
      );
      sameShape(direct);
      const failing = await fn('diagagent_reward.py', env()).run([
        sample(full('Acute appendicitis'), 'Acute appendicitis [[standin-fault:401]]'),
        { data_source: 'diagagent', solution_str: seedFinal('Acute appendicitis'), ground_truth: 'Acute appendicitis' },
      ]);
      assert.match(failing[0]!.error!, /judge HTTP 401/);
      assert.match(failing[1]!.error!, /key_exam_names/);
    });
  });
});
