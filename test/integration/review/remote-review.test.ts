import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';
import { execChecked, type Host } from '../../../src/core/remote/host';
import { shellPath } from '../../../src/core/remote/shell-quote';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { openJudge } from '../../../src/core/judge/judges';
import { parseWorkspaceConfig } from '../../../src/core/config/load-workspace-config';
import { episodeHash, type ReviewRecord } from '../../../src/core/review/review-record';
import { appendReview, readReviews } from '../../../src/core/review/review-store';
import { loadRunReviews } from '../../../src/core/review/run-reviews';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const FIX = join(ROOT, 'test/fixtures/episodes/verl-run/rollouts/1.jsonl');
// A run folder whose name needs quoting: every path reaches the host's shell quoted.
const RUN = "~/runs/it's a $(run)";

describe('clinician reviews on a real SSH host (sshd on loopback)', () => {
  let fx: SshdFixture;
  let host: Host;
  let judge: StandinServer;
  const reviews: ReviewRecord[] = [];
  before(async () => {
    fx = await startSshd();
    host = fx.makeHost({ name: 'gpu' });
    judge = await startStandinServer(['--served-model-name', 'Judger']);
    await host.writeFile(`${RUN}/rollouts/1.jsonl`, readFileSync(FIX));
    const [rollouts] = await discoverEpisodes(host, RUN);
    for (const i of [0, 1, 2]) {
      const ep = await rollouts!.files[0]!.read(i);
      for (const reviewer of ['dr-lee', 'dr-kim', 'dr-ng'])
        reviews.push({
          episode: { set: 'rollouts', step: 1, index: i },
          hash: episodeHash(ep.raw),
          verdict: reviewer === 'dr-ng' && i === 1 ? 'partial' : ep.score! >= 0.5 ? 'correct' : 'incorrect',
          scores: { safety: 3 },
          note: `it's "fine"; $(rm -rf ~) \`x\`\nline ${i}`,
          reviewer,
          time: new Date(Date.UTC(2026, 10, 26, 10, i)).toISOString(),
        });
    }
  });
  after(async () => {
    await judge?.stop();
    await host?.dispose();
    await fx?.stop();
  });

  it('appends over SSH into a 0700 folder and 0600 files, one line per review, and reads them back unchanged', async () => {
    for (const r of reviews) await appendReview(host, RUN, r);
    const dir = `${RUN}/reviews`;
    assert.equal((await execChecked(host, `stat -c %a ${shellPath(dir)}`)).stdout.trim(), '700');
    for (const name of ['dr-lee', 'dr-kim', 'dr-ng'])
      assert.equal((await execChecked(host, `stat -c %a ${shellPath(`${dir}/${name}.jsonl`)}`)).stdout.trim(), '600');
    assert.equal((await host.readFile(`${dir}/dr-lee.jsonl`)).toString('utf8').split('\n').length, 4);
    const { records, malformed } = await readReviews(host, RUN);
    assert.deepEqual(malformed, []);
    const byKey = (r: ReviewRecord) => `${r.reviewer}/${r.episode.index}`;
    assert.deepEqual(records.map(byKey).sort(), reviews.map(byKey).sort());
    assert.deepEqual(
      records.find((r) => byKey(r) === 'dr-lee/1'),
      reviews.find((r) => byKey(r) === 'dr-lee/1'),
    );
    assert.deepEqual(await host.readdir('~/runs').then((e) => e.map((x) => x.name)), ["it's a $(run)"], 'nothing else was made');
  });

  it('stats on the host with a judge of medrl.yaml, its answers cached: the second pass makes no call', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'medrl-review-cache-'));
    const { config } = parseWorkspaceConfig(`judges:\n  j:\n    url: ${judge.url}\n    model: Judger\n    seed: 1\n`, 'medrl.yaml');
    const opened = await openJudge('j', config!.judges.j!, { cacheDir });
    try {
      const first = await loadRunReviews(host, RUN, { threshold: 0.5, judges: { j: opened.scorer } });
      assert.deepEqual(first.stats.reviewers, { 'dr-kim': 3, 'dr-lee': 3, 'dr-ng': 3 });
      assert.deepEqual(first.judgeFailures, { j: 0 });
      const pair = (a: string, b: string) => first.stats.pairs.find((p) => p.a === a && p.b === b)!;
      assert.deepEqual([pair('dr-kim', 'dr-lee').n, pair('dr-kim', 'dr-lee').kappa], [3, 1]);
      assert.deepEqual([pair('dr-lee', 'reward').n, pair('dr-lee', 'reward').kappa], [3, 1]);
      assert.equal(pair('dr-lee', 'judge:j').n, 3);
      assert.equal(first.stats.fleiss?.raters, 3);
      assert.equal(first.rows.length, 9);
      assert.ok(first.rows.every((r) => typeof r.judges.j === 'number' && !r.stale));
      const before = judge
        .log()
        .split('\n')
        .filter((l) => l.includes('POST')).length;
      const second = await loadRunReviews(host, RUN, { threshold: 0.5, judges: { j: opened.scorer } });
      assert.deepEqual(second.stats, first.stats);
      assert.equal(
        judge
          .log()
          .split('\n')
          .filter((l) => l.includes('POST')).length,
        before,
        'every answer from the cache',
      );
    } finally {
      await opened.close();
    }
  });

  it('a dump rewritten under the reviews makes them stale', async () => {
    const text = readFileSync(FIX, 'utf8').split('\n');
    const changed = JSON.parse(text[1]!) as { output: string };
    changed.output += ' (edited)';
    text[1] = JSON.stringify(changed);
    await host.writeFile(`${RUN}/rollouts/1.jsonl`, text.join('\n'));
    const { stats } = await loadRunReviews(host, RUN, { threshold: 0.5 });
    assert.deepEqual(stats.stale.map((s) => `${s.reviewer}/${s.index}`).sort(), ['dr-kim/1', 'dr-lee/1', 'dr-ng/1']);
    assert.equal(stats.pairs.find((p) => p.a === 'dr-kim' && p.b === 'dr-lee')!.n, 2);
  });

  it('medrl review stats --host gpu as a user runs it', () => {
    const workspace = mkdtempSync(join(tmpdir(), 'medrl-ws-'));
    writeFileSync(join(workspace, 'medrl.yaml'), `version: 1\nhosts:\n  gpu:\n    ssh: ${fx.alias}\n`);
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'review', 'stats', RUN, '--host', 'gpu', '--json'], {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, HOME: fx.home },
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { reviewers: Record<string, number>; stale: unknown[] };
    assert.deepEqual(out.reviewers, { 'dr-kim': 3, 'dr-lee': 3, 'dr-ng': 3 });
    assert.equal(out.stale.length, 3);
    assert.ok(!r.stdout.includes('rm -rf') && !r.stderr.includes('rm -rf'), 'no note printed');
  });
});
