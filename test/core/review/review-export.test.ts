import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { kappaMarkdown, reviewsCsv, type ReviewExportRow } from '../../../src/core/review/review-export';
import { parseWorkspaceConfig } from '../../../src/core/config/load-workspace-config';
import { rubricCriteria } from '../../../src/core/config/workspace-config';

const row = (over: Partial<ReviewExportRow>): ReviewExportRow => ({
  reviewer: 'dr-lee',
  episode: { set: 'rollouts', step: 12, index: 3 },
  dataSource: 'medqa',
  verdict: 'incorrect',
  pass: false,
  scores: { safety: 2 },
  note: '',
  time: '2026-11-26T10:00:00Z',
  reward: 1,
  judges: { gpt: 0 },
  stale: false,
  ...over,
});

describe('review export', () => {
  it('CSV with RFC 4180 quoting: a note with a comma, a quote and a line break reads back the same', () => {
    const note = 'says "pneumonia", not\nbronchitis';
    const csv = reviewsCsv([
      row({ note }),
      row({ reviewer: 'dr-kim', verdict: 'correct', pass: true, scores: { accuracy: 5 }, judges: {}, reward: null, stale: true }),
    ]);
    assert.ok(csv.endsWith('\r\n'));
    const [header, ...rows] = parse(csv) as string[][];
    assert.deepEqual(header, [
      'reviewer',
      'set',
      'step',
      'index',
      'data_source',
      'verdict',
      'pass',
      'accuracy',
      'safety',
      'note',
      'time',
      'reward',
      'judge:gpt',
      'stale',
    ]);
    assert.deepEqual(rows[0], [
      'dr-lee',
      'rollouts',
      '12',
      '3',
      'medqa',
      'incorrect',
      'false',
      '',
      '2',
      note,
      '2026-11-26T10:00:00Z',
      '1',
      '0',
      'false',
    ]);
    assert.deepEqual(rows[1], [
      'dr-kim',
      'rollouts',
      '12',
      '3',
      'medqa',
      'correct',
      'true',
      '5',
      '',
      '',
      '2026-11-26T10:00:00Z',
      '',
      '',
      'true',
    ]);
  });

  it('the kappa table as Markdown', () => {
    const md = kappaMarkdown({
      reviewers: { a: 2, b: 2, c: 2 },
      pairs: [{ a: 'a', b: 'reward', n: 2, kappa: null, agree: 0.5, confusion: { pp: 1, pf: 1, fp: 0, ff: 0 }, disagreements: [] }],
      fleiss: { n: 2, raters: 3, kappa: 0.412 },
      stale: [{ set: 'rollouts', step: 1, index: 0, reviewer: 'a' }],
    });
    assert.match(
      md,
      /^\| rater A \| rater B \| n \| κ \| agreement \|\n\| --- \| --- \| ---: \| ---: \| ---: \|\n\| a \| reward \| 2 \| – \| 0\.50 \|\n/,
    );
    assert.match(md, /Fleiss' κ over 2 episodes rated by all 3 reviewers: 0\.41/);
    assert.match(md, /1 stale review/);
  });
});

describe('medrl.yaml review.rubric', () => {
  it('names or {name, description}, in one shape; none by default', () => {
    const { config, problems } = parseWorkspaceConfig(
      'review:\n  rubric:\n    - accuracy\n    - name: safety\n      description: no harmful advice\n',
      'medrl.yaml',
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(rubricCriteria(config), [{ name: 'accuracy' }, { name: 'safety', description: 'no harmful advice' }]);
    assert.deepEqual(rubricCriteria(parseWorkspaceConfig('version: 1\n', 'medrl.yaml').config), []);
    assert.deepEqual(rubricCriteria(undefined), []);
  });

  it('a repeated or malformed criterion is an error at its file, line and field', () => {
    const dup = parseWorkspaceConfig('review:\n  rubric:\n    - safety\n    - safety\n', 'medrl.yaml');
    assert.equal(dup.config, undefined);
    assert.match(JSON.stringify(dup.problems), /criterion \\"safety\\" is listed twice/);
    const p = dup.problems[0]!;
    assert.deepEqual([p.file, p.line], ['medrl.yaml', 4]);
    const bad = parseWorkspaceConfig('review:\n  rubric:\n    - {name: "two words"}\n  extra: 1\n', 'medrl.yaml');
    assert.equal(bad.config, undefined);
    const text = JSON.stringify(bad.problems);
    assert.match(text, /review\.rubric\[0\]/);
    assert.match(text, /review\.extra|"extra"/);
  });
});
