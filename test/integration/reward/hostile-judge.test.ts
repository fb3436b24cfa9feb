import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * configs/rewards/medrl_judge.py (imported by the DiagAgent, ECG and diagnosis rewards inside verl) against a local judge
 * that misbehaves (hostile_judge.py): each call ends within its deadline with a RuntimeError saying why, never the prompt.
 */
function call(judgeCase: string): { seconds: number; calls: number; answer?: string; error?: string } {
  // The process's own bound: before these rules, a Retry-After of an hour was slept through.
  const out = execFileSync('python3', [join(__dirname, 'hostile_judge.py'), judgeCase], { timeout: 30_000, encoding: 'utf8' });
  return JSON.parse(out);
}

describe('medrl_judge.py against a hostile judge (timeout 1 s per attempt, deadline 3 s per call)', () => {
  it('refuses a Retry-After longer than 60 s at once, naming it, instead of sleeping', () => {
    const r = call('retry-after-hour');
    assert.match(
      r.error!,
      /^judge HTTP 429 from http:\/\/127\.0\.0\.1:\d+\/v1: rate limited; the judge asked to retry after 3600 s \(Retry-After\), longer than the 60 s MedRL waits/,
    );
    assert.ok(r.seconds < 1, `${r.seconds} s`);
  });

  it('ends a call whose answer drips in a byte at a time within its deadline', () => {
    const r = call('drip');
    assert.match(
      r.error!,
      /^judge request failed \(http:\/\/127\.0\.0\.1:\d+\/v1\): no complete answer within 1 s; not retried: the call's 3 s deadline comes first/,
    );
    assert.ok(r.seconds < 3.5, `${r.seconds} s`);
    assert.doesNotMatch(r.error!, /Jane Roe|12345/);
  });

  it('refuses an answer over 4 MiB, announced or streamed, without reading it whole or retrying', () => {
    const declared = call('huge-declared');
    assert.match(declared.error!, /^judge answer refused \(.*\): it is 64\.0 MiB \(Content-Length\), over the 4 MiB limit; not read$/);
    const streamed = call('huge-streamed');
    assert.match(streamed.error!, /^judge answer refused \(.*\): it passed the 4 MiB limit while streaming; the rest not read$/);
    assert.deepEqual([declared.calls, streamed.calls], [1, 1]);
  });

  it('still retries a judge that is briefly unavailable', () => {
    const r = call('unavailable-then-ok');
    assert.equal(r.answer, 'Score: 1');
    assert.equal(r.calls, 3);
  });
});
