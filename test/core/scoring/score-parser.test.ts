import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseScore, parseScoreSpec, describeParser } from '../../../src/core/scoring/score-parser';
import { renderTemplate, sampleVariables } from '../../../src/core/judge/template';

describe('judge score parsing', () => {
  it('reads numbers, preferring "Score: N"', () => {
    assert.equal(parseScore('Step 1 of 3. Score: 7\nbecause', { kind: 'number' }).score, 7);
    assert.equal(parseScore('I give it 0.5 overall', { kind: 'number' }).score, 0.5);
    assert.deepEqual(parseScore('cannot decide', { kind: 'number' }), {
      score: null,
      detail: null,
      error: 'no number in the judge answer',
    });
  });

  it('reads a JSON field from fenced or embedded JSON, and says what is wrong', () => {
    const p = parseScoreSpec('json:score');
    assert.equal(parseScore('```json\n{"score": 1, "reason": "same {dx}"}\n```', p).score, 1);
    assert.equal(parseScore('Verdict: {"verdict": {"score": "0.25"}}', parseScoreSpec('json:verdict.score')).score, 0.25);
    assert.equal(parseScore('{"score": true}', p).score, 1);
    const missing = parseScore('{"label": "correct"}', p);
    assert.equal(missing.score, null);
    assert.match(missing.error!, /JSON field "score" is missing/);
    assert.deepEqual(missing.detail, { label: 'correct' });
    assert.match(parseScore('{"score": "high"}', p).error!, /not a number \("high"\)/);
    assert.match(parseScore('{"score": 1', p).error!, /no JSON object/);
  });

  it('maps labels by whole word, first one in the text wins ("incorrect" is not "correct")', () => {
    const p = parseScoreSpec('label:correct=1,incorrect=0,partially-correct=0.5');
    assert.equal(parseScore('The answer is incorrect.', p).score, 0);
    assert.equal(parseScore('Label: correct', p).score, 1);
    assert.equal(parseScore('partially-correct, not fully correct', p).score, 0.5);
    assert.match(parseScore('unsure', p).error!, /none of the labels correct, incorrect, partially-correct/);
  });

  it('takes the first group of a regex, and refuses bad specs with the reason', () => {
    assert.equal(parseScore('Final grade = 4/5', parseScoreSpec('regex:grade = (\\d)')).score, 4);
    assert.match(parseScore('x', parseScoreSpec('regex:grade (\\d)')).error!, /does not match/);
    assert.throws(() => parseScoreSpec('label:correct'), /"correct" is not LABEL=NUMBER/);
    assert.throws(() => parseScoreSpec('xml:score'), /use number, json:FIELD/);
    assert.throws(() => parseScoreSpec('regex:(unclosed'), /Invalid regular expression/);
    assert.equal(describeParser(parseScoreSpec('label:yes=1,no=0')), 'label:yes=1,no=0');
  });
});

describe('judge prompt templates', () => {
  const vars = sampleVariables({
    data_source: 'diag',
    solution_str: 'Acute appendicitis',
    ground_truth: 'appendicitis',
    extra_info: { age: 34, exams: ['CT'] },
    prompt: [{ role: 'user', content: 'Case: RLQ pain' }],
    extra: { ward: 'ED' },
  });
  it('fills sample fields, nested extra_info, other columns, and keeps {{ }} literal', () => {
    assert.equal(
      renderTemplate(
        'Ref: {ground_truth} | Resp: {solution_str} | {extra_info.age} {extra_info.exams} {ward} | {prompt} | {{"score": 1}}',
        vars,
      ),
      'Ref: appendicitis | Resp: Acute appendicitis | 34 ["CT"] ED | Case: RLQ pain | {"score": 1}',
    );
  });
  it('names a missing variable and lists the ones the sample has', () => {
    assert.throws(
      () => renderTemplate('{reference}', vars),
      /uses \{reference\}, which this sample does not have \(it has: ward, data_source, solution_str, response, ground_truth, extra_info, prompt\)/,
    );
    assert.throws(() => renderTemplate('{extra_info.sex}', vars), /\{extra_info\.sex\}/);
  });
});
