import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { run } from './run-cli';
import { writeRunFolder } from '../fixtures/run-folders';
import { LocalHost } from '../../src/core/remote/local-host';
import { discoverEpisodes } from '../../src/core/episodes/discover';
import { episodeHash, type Verdict } from '../../src/core/review/review-record';
import { appendReview } from '../../src/core/review/review-store';

const FIX = join(__dirname, '../fixtures/episodes/verl-run');

describe('medrl review', () => {
  const ws = mkdtempSync(join(tmpdir(), 'medrl-review-cli-'));
  const runsDir = join(ws, 'runs');
  const dir = writeRunFolder(runsDir, 'grpo-review-1', { exitCode: 0 });
  const scores: number[] = [];
  before(async () => {
    cpSync(join(FIX, 'rollouts'), join(dir, 'rollouts'), { recursive: true });
    writeFileSync(join(ws, 'medrl.yaml'), `version: 1\nhosts:\n  local:\n    runsDir: ${runsDir}\nreview:\n  rubric: [accuracy, safety]\n`);
    const host = new LocalHost();
    const [rollouts] = await discoverEpisodes(host, dir);
    const eps = await Promise.all([0, 1, 2, 3].map((i) => rollouts!.files[0]!.read(i)));
    scores.push(...eps.map((e) => e.score!));
    // dr-lee calls each episode as the reward did; dr-kim the opposite on 1 and 3; both reviewed 0-3.
    const verdict = (pass: boolean): Verdict => (pass ? 'correct' : 'incorrect');
    for (const [i, ep] of eps.entries()) {
      const base = {
        episode: { set: 'rollouts', step: 1, index: i },
        hash: episodeHash(ep.raw),
        scores: { safety: 4 },
        time: '2026-11-26T10:00:00Z',
      };
      await appendReview(host, dir, {
        ...base,
        reviewer: 'dr-lee',
        verdict: verdict(ep.score! >= 0.5),
        note: i === 0 ? 'Mr "X", 3rd\nline' : '',
      });
      await appendReview(host, dir, {
        ...base,
        reviewer: 'dr-kim',
        verdict: verdict(i % 2 ? ep.score! < 0.5 : ep.score! >= 0.5),
        note: '',
      });
    }
    // A review of an episode that has changed since.
    await appendReview(host, dir, {
      episode: { set: 'rollouts', step: 2, index: 0 },
      hash: '0'.repeat(64),
      verdict: 'unsafe',
      scores: {},
      note: '',
      reviewer: 'dr-lee',
      time: '2026-11-26T10:05:00Z',
    });
  });

  it('stats --json by run id: counts, pairwise kappa against each other and the reward, stale reviews', async () => {
    const r = await run(['review', 'stats', 'grpo-review', '--no-judges', '--json'], ws);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as {
      reviewers: Record<string, number>;
      pairs: { a: string; b: string; n: number; kappa: number | null; agree: number; disagreements: unknown[] }[];
      stale: unknown[];
    };
    assert.deepEqual(out.reviewers, { 'dr-kim': 4, 'dr-lee': 5 });
    const lee = out.pairs.find((p) => p.a === 'dr-lee' && p.b === 'reward')!;
    assert.deepEqual([lee.n, lee.kappa, lee.agree], [4, 1, 1]);
    const kim = out.pairs.find((p) => p.a === 'dr-kim' && p.b === 'dr-lee')!;
    assert.deepEqual(
      [kim.n, kim.agree, kim.disagreements],
      [
        4,
        0.5,
        [
          { set: 'rollouts', step: 1, index: 1 },
          { set: 'rollouts', step: 1, index: 3 },
        ],
      ],
    );
    assert.deepEqual(out.stale, [{ set: 'rollouts', step: 2, index: 0, reviewer: 'dr-lee' }]);
  });

  it('stats by folder, as a table; malformed lines on stderr with file and line (exit 1), never a note', async () => {
    const ok = await run(['review', 'stats', dir, '--no-judges'], ws);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /reviewers: dr-kim 4, dr-lee 5/);
    assert.match(ok.out, /dr-lee +reward +4 +1\.00 +100\.0%/);
    assert.match(ok.out, /stale: 1 review/);
    assert.ok(!ok.out.includes('Mr "X"'));
    const other = mkdtempSync(join(tmpdir(), 'medrl-review-cli-'));
    cpSync(dir, other, { recursive: true });
    appendFileSync(join(other, 'reviews', 'dr-kim.jsonl'), '{"note": "Mr Y, MRN 123"}\n');
    const bad = await run(['review', 'stats', other, '--no-judges', '--threshold', '2'], ws);
    assert.equal(bad.code, 1);
    assert.match(bad.err, new RegExp(`${join(other, 'reviews', 'dr-kim.jsonl')}:5: episode: missing`));
    assert.ok(!bad.err.includes('Mr Y') && !bad.out.includes('Mr Y'));
    // No reward reaches 2, so the reward fails all four; dr-lee passes one: p_o = 3/4, p_e = 1/4*0 + 3/4*1 = 3/4, kappa = 0.
    assert.match(bad.out, /dr-lee +reward +4 +0\.00 +75\.0%/);
  });

  // dr-kim vs dr-lee: pp 1, pf 2, fp 0, ff 1: p_o = .5; pass rates 3/4 and 1/4: p_e = .375; kappa = .125 / .625 = .2
  it('export writes the CSV (0600) and the kappa table; bad usage exits 2', async () => {
    const r = await run(['review', 'export', 'grpo-review-1', '--no-judges', '--out', 'reviews.csv', '--kappa', 'kappa.md'], ws);
    assert.equal(r.code, 0, r.err);
    assert.equal(statSync(join(ws, 'reviews.csv')).mode & 0o777, 0o600);
    const [header, ...rows] = parse(readFileSync(join(ws, 'reviews.csv'), 'utf8')) as string[][];
    assert.deepEqual(header, [
      'reviewer',
      'set',
      'step',
      'index',
      'data_source',
      'verdict',
      'pass',
      'safety',
      'note',
      'time',
      'reward',
      'stale',
    ]);
    assert.equal(rows.length, 9);
    const first = rows.find((x) => x[0] === 'dr-lee' && x[3] === '0')!;
    assert.deepEqual([first[8], first[10], first[11]], ['Mr "X", 3rd\nline', String(scores[0]), 'false']);
    assert.match(readFileSync(join(ws, 'kappa.md'), 'utf8'), /\| dr-kim \| dr-lee \| 4 \| 0\.20 \| 0\.50 \|/);
    assert.equal((await run(['review', 'export', dir], ws)).code, 2);
    assert.equal((await run(['review', 'stats'], ws)).code, 2);
    assert.equal((await run(['review', 'stats', dir, '--threshold', 'x'], ws)).code, 2);
  });
});
