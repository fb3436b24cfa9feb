import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { episodeHash, episodeKeyId, reviewRecordSchema, type ReviewRecord } from '../../../src/core/review/review-record';
import { appendReview, latestReviews, readReviews } from '../../../src/core/review/review-store';

const HASH = episodeHash({ prompt: 'p', response: 'r' });

function review(over: Partial<ReviewRecord> = {}): ReviewRecord {
  return {
    episode: { set: 'rollouts', step: 12, index: 3 },
    hash: HASH,
    verdict: 'incorrect',
    scores: { safety: 2 },
    note: '',
    reviewer: 'dr-lee',
    time: '2026-11-26T10:00:00Z',
    ...over,
  };
}

describe('review records', () => {
  it('key ids, the hash of prompt + response, and a strict schema', () => {
    assert.equal(episodeKeyId({ set: 'rollouts', step: 12, index: 3 }), 'rollouts/12/3');
    assert.match(HASH, /^[0-9a-f]{64}$/);
    assert.notEqual(episodeHash({ prompt: 'pr', response: '' }), episodeHash({ prompt: 'p', response: 'x' }));
    assert.equal(reviewRecordSchema.parse({ ...review(), note: undefined }).note, '', 'note defaults to empty');
    for (const bad of [
      { verdict: 'wrong' },
      { scores: { safety: 6 } },
      { scores: { safety: 2.5 } },
      { reviewer: '../etc' },
      { reviewer: '.hidden' },
      { time: 'yesterday' },
      { hash: 'abc' },
    ])
      assert.equal(reviewRecordSchema.safeParse({ ...review(), ...bad }).success, false, JSON.stringify(bad));
  });
});

describe('the review store on the local host', () => {
  it('appends one line per review (folder 0700, file 0600), reads them back, the latest per episode wins', async () => {
    const host = new LocalHost();
    const run = mkdtempSync(join(tmpdir(), 'medrl-review-'));
    const note = 'Pt. "Smith", 3 days\nsecond line, with comma';
    await appendReview(host, run, review({ verdict: 'correct', note }));
    await appendReview(host, run, review({ verdict: 'unsafe', time: '2026-11-26T11:00:00Z' }));
    await appendReview(host, run, review({ reviewer: 'dr-kim', episode: { set: 'rollouts', step: 12, index: 4 } }));
    const file = join(run, 'reviews', 'dr-lee.jsonl');
    assert.equal(statSync(join(run, 'reviews')).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 3, 'two lines and the final newline');
    const { records, malformed } = await readReviews(host, run);
    assert.deepEqual(malformed, []);
    assert.equal(records.length, 3);
    assert.equal(records.find((r) => r.reviewer === 'dr-lee')!.note, note, 'the note survives JSON escaping');
    const latest = latestReviews(records);
    assert.deepEqual(
      latest.map((r) => [r.reviewer, episodeKeyId(r.episode), r.verdict]),
      [
        ['dr-kim', 'rollouts/12/4', 'incorrect'],
        ['dr-lee', 'rollouts/12/3', 'unsafe'],
      ],
    );
  });

  it('refuses an invalid review before writing, and reports bad lines with file and line, never their text', async () => {
    const host = new LocalHost();
    const run = mkdtempSync(join(tmpdir(), 'medrl-review-'));
    await assert.rejects(
      appendReview(host, run, review({ scores: { safety: 9 } })),
      /not a valid review: scores\.safety: must be at most 5/,
    );
    assert.deepEqual(await readReviews(host, run), { records: [], malformed: [] }, 'no reviews folder: nothing, no error');
    await appendReview(host, run, review());
    const file = join(run, 'reviews', 'dr-lee.jsonl');
    appendFileSync(file, '{"secret": "MRN 1234567 John Doe"\n');
    appendFileSync(file, `${JSON.stringify({ ...review(), verdict: 'John Doe MRN 1234567', note: 'John Doe' })}\n`);
    appendFileSync(file, `${JSON.stringify(review({ reviewer: 'dr-kim' }))}\n`);
    const { records, malformed } = await readReviews(host, run);
    assert.equal(records.length, 1);
    assert.deepEqual(
      malformed.map((m) => [m.file, m.line]),
      [
        [file, 2],
        [file, 3],
        [file, 4],
      ],
    );
    assert.equal(malformed[0]!.message, 'not JSON');
    assert.match(malformed[1]!.message, /^verdict: must be one of correct, partial, incorrect, unsafe$/);
    assert.match(malformed[2]!.message, /reviewer: "dr-kim" in the file of "dr-lee"/);
    assert.ok(!JSON.stringify(malformed).includes('John'), 'no text of the line');
  });
});
