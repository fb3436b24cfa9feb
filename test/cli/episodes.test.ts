import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main';

const FIX = join(__dirname, '../fixtures/episodes');

async function medrl(argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (d: Buffer) => out.push(d.toString()));
  stderr.on('data', (d: Buffer) => err.push(d.toString()));
  const code = await main(argv, { stdout, stderr, cwd: FIX });
  return { code, out: out.join(''), err: err.join('') };
}

describe('medrl episodes', () => {
  it('--json prints one object per episode with step, index, score, turns, ground truth and extra keys', async () => {
    const r = await medrl(['episodes', 'verl-run', '--set', 'rollouts', '--step', '1', '--json']);
    assert.equal(r.code, 0, r.err);
    const eps = r.out
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            step: number;
            index: number;
            score: number;
            turns: { role: string; content: string; name?: string; environment?: true }[];
            groundTruth: unknown;
            extra: Record<string, unknown>;
          },
      );
    assert.equal(eps.length, 20);
    assert.deepEqual(
      eps.map((e) => e.index),
      [...Array(20).keys()],
    );
    assert.ok(eps.every((e) => e.step === 1));
    // The tools' answers inside the response are the environment's (masked out of the loss), and say so.
    assert.deepEqual(
      eps[0]!.turns.map((t) => `${t.role}${t.environment ? ' (environment)' : ''}`),
      ['system', 'user', 'assistant', 'tool (environment)', 'assistant', 'tool (environment)', 'assistant'],
    );
    assert.equal(eps[0]!.groundTruth, 'Community-acquired pneumonia');
    assert.deepEqual(Object.keys(eps[0]!.extra).sort(), ['acc', 'num_turns', 'pred']);
  });

  it('malformed lines go to stderr with file and line, the rest is printed, exit 1', async () => {
    const r = await medrl(['episodes', 'malformed/7.jsonl', '--json']);
    assert.equal(r.code, 1);
    assert.equal(r.out.trim().split('\n').length, 3);
    const file = join(FIX, 'malformed/7.jsonl');
    for (const line of [2, 5, 6, 8]) assert.ok(r.err.includes(`${file}:${line}: malformed:`), `line ${line} reported:\n${r.err}`);
  });

  it('reads a transcript as text, and says what is wrong with bad usage', async () => {
    const r = await medrl(['episodes', 'trajectories.jsonl']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /\[tool order_exam\]\nUltrasound: multiple gallstones/);
    assert.equal((await medrl(['episodes'])).code, 2);
    assert.equal((await medrl(['episodes', 'verl-run', '--step', 'x'])).code, 2);
    const missing = await medrl(['episodes', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no such file or folder: .*nope/);
  });
});
