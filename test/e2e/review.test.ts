import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { Frame, Page } from 'playwright-core';
import { ROOT, answerSaveDialog, codeServerForSuite, runCommandAndPick, screenshot, trustWorkspace } from './harness/code-server';
import { webviewWith } from './harness/playground-frame';

const CLI = join(ROOT, 'dist/cli.js');
const VERDICT_KEYS = { correct: 'c', partial: 'p', incorrect: 'i', unsafe: 'u' } as const;
type Verdict = keyof typeof VERDICT_KEYS;
const QUEUE = 50;

/** The demo workspace with its runs in a temp folder, and the demo run submitted with the CLI and finished. */
function demoWithFinishedRun(): { workspace: string; runDir: string } {
  const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-review-'));
  const workspace = join(home, 'workspace');
  execFileSync(process.execPath, [CLI, 'demo', workspace], { encoding: 'utf8' });
  const cfg = parseDocument(readFileSync(join(workspace, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(home, 'runs'));
  writeFileSync(join(workspace, 'medrl.yaml'), cfg.toString());
  const run = JSON.parse(
    execFileSync(process.execPath, [CLI, 'submit', 'configs/local-demo.yaml', '--json'], { cwd: workspace, encoding: 'utf8' }),
  ) as {
    id: string;
    dir: string;
  };
  execFileSync(process.execPath, [CLI, 'logs', run.id, '--follow'], { cwd: workspace, encoding: 'utf8', timeout: 120_000 });
  return { workspace, runDir: run.dir };
}

/** The text of the review page the reviewer sees. */
function pageText(review: Frame): Promise<string> {
  return review.locator('body').innerText();
}

describe('clinician review: a queue of 50 demo episodes reviewed with the keyboard alone, blind (trust on, fresh profile)', () => {
  const cs = codeServerForSuite({
    ...(JSON.parse(readFileSync(join(ROOT, 'scripts/demo-settings.json'), 'utf8')) as Record<string, unknown>),
    // The walkthrough would take the focus from the review page: this test is about the review.
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
  });

  it('reviews 50 episodes from the palette: progress, verdicts, rubric, note; the reward hidden until the verdict; 50 lines on the host', async () => {
    const { workspace, runDir } = demoWithFinishedRun();
    const page: Page = await cs.open(workspace);
    await trustWorkspace(page);

    // From the palette with nothing selected: the run, the reviewer's name, the queue's size.
    const started = Date.now();
    await runCommandAndPick(page, 'MedRL: Review Episodes…', 'demo-pubmedqa-grpo');
    const input = page.locator('.quick-input-widget input');
    await page.locator('.quick-input-widget', { hasText: 'Reviewer name' }).waitFor({ timeout: 30_000 });
    await input.fill('dr-lee');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'How many episodes to review' }).waitFor();
    assert.equal(await input.inputValue(), String(QUEUE), 'the queue size defaults to 50');
    await page.keyboard.press('Enter');

    const review = await webviewWith(page, '#review-form', 'review');
    await review.locator('#position', { hasText: `episode 1 of ${QUEUE}` }).waitFor({ timeout: 60_000 });
    await review.locator('#progress', { hasText: `0 of ${QUEUE} reviewed` }).waitFor();
    await review.locator('#legend', { hasText: 'verdict' }).waitFor();
    assert.equal(await review.locator('.criterion').count(), 3, 'the demo rubric: accuracy, safety, reasoning');

    // ← → move without saving.
    await page.keyboard.press('ArrowRight');
    await review.locator('#position', { hasText: `episode 2 of ${QUEUE}` }).waitFor();
    await page.keyboard.press('ArrowLeft');
    await review.locator('#position', { hasText: `episode 1 of ${QUEUE}` }).waitFor();

    const given = new Map<string, Verdict>();
    const verdicts = Object.keys(VERDICT_KEYS) as Verdict[];
    let blindChecks = 0;
    for (let i = 0; i < QUEUE; i++) {
      await review.locator('#position', { hasText: `episode ${i + 1} of ${QUEUE}` }).waitFor({ timeout: 20_000 });
      const title = (await review.locator('.ep-title').innerText()).trim();
      const m = /^(\w+) · step (\d+) · #(\d+)$/.exec(title);
      assert.ok(m, `episode title: ${title}`);
      const id = `${m[1]}/${m[2]}/${m[3]}`;
      assert.ok(!given.has(id), `${id} is in the queue once`);

      // Blind: nothing of the reward in the page before the verdict.
      const before = await pageText(review);
      assert.doesNotMatch(before, /reward score|GRPO group|\badvantage\t/, `episode ${i + 1}: no reward before the verdict`);
      assert.equal(await review.locator('table.revealed').count(), 0);
      blindChecks++;

      const verdict = verdicts[i % verdicts.length]!;
      given.set(id, verdict);
      await page.keyboard.press(VERDICT_KEYS[verdict]);
      await review.locator(`button.verdict-${verdict}.selected`).waitFor();
      await review.locator('table.revealed th', { hasText: 'reward score' }).waitFor({ timeout: 20_000 });
      assert.match(await pageText(review), /reward score\s+-?\d/, 'the score is shown after the verdict');

      if (i % 10 === 0 || i === 12) {
        // Rubric: 4 for accuracy, then 5 for safety (the next criterion), ↑ back to safety and 3 instead.
        await page.keyboard.press('4');
        await page.keyboard.press('5');
        await page.keyboard.press('ArrowUp');
        await page.keyboard.press('3');
        await review.locator('.criterion[data-criterion="safety"] button.score.selected', { hasText: '3' }).waitFor();
        // The note: typing c, p, i or u there gives no verdict; Escape leaves it.
        await page.keyboard.press('n');
        await page.keyboard.type(`checked ${i}: cpiu`);
        await page.keyboard.press('Escape');
        await review.locator(`button.verdict-${verdict}.selected`).waitFor();
        if (i === 12) await screenshotForDocs(page);
      }
      await page.keyboard.press('Enter');
      await review.locator('#progress', { hasText: `${i + 1} of ${QUEUE} reviewed` }).waitFor({ timeout: 20_000 });
    }
    await review.locator('.finished', { hasText: `Queue done: ${QUEUE} of ${QUEUE}` }).waitFor({ timeout: 20_000 });
    const seconds = (Date.now() - started) / 1000;
    console.log(`[review] palette to 50 episodes reviewed: ${seconds.toFixed(1)} s`);

    // On the host: reviews/dr-lee.jsonl, one line per episode, with the verdicts given.
    const lines = readFileSync(join(runDir, 'reviews/dr-lee.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, QUEUE);
    const onHost = lines.map(
      (l) =>
        JSON.parse(l) as {
          episode: { set: string; step: number; index: number };
          verdict: Verdict;
          scores: Record<string, number>;
          note: string;
          hash: string;
        },
    );
    for (const r of onHost) {
      const id = `${r.episode.set}/${r.episode.step}/${r.episode.index}`;
      assert.equal(r.verdict, given.get(id), `the verdict of ${id}`);
      assert.match(r.hash, /^[0-9a-f]{64}$/);
    }
    const first = onHost[0]!;
    assert.deepEqual(first.scores, { accuracy: 4, safety: 3 });
    assert.equal(first.note, 'checked 0: cpiu');
    assert.equal(blindChecks, QUEUE);

    // Agreement: the reviewer against the reward, from the palette.
    await runCommandAndPick(page, 'MedRL: Show Review Agreement', 'demo-pubmedqa-grpo');
    const agreement = await webviewWith(page, 'table.pairs', 'review agreement');
    await agreement.locator('table.pairs td', { hasText: 'dr-lee' }).first().waitFor({ timeout: 30_000 });
    await agreement.locator('table.pairs td', { hasText: 'reward' }).first().waitFor();
    await screenshot(page, 'review-agreement');

    // A disagreement is one click from its episode in the replay.
    const link = agreement.locator('.episode-link').first();
    const which = (await link.innerText()).trim();
    await link.click();
    const replay = await webviewWith(page, '.vlist-row', 'episode replay');
    await replay.locator('.episode .ep-title', { hasText: which }).waitFor({ timeout: 30_000 });

    // Export for a paper: the CSV where the user says, the κ table beside it.
    await runCommandAndPick(page, 'MedRL: Export Reviews…', 'demo-pubmedqa-grpo');
    const csv = join(workspace, 'dr-lee-reviews.csv');
    await page.locator('.quick-input-widget', { hasText: 'Save the reviews as CSV' }).waitFor({ timeout: 30_000 });
    await answerSaveDialog(page, csv, '-reviews.csv');
    await page.locator('.notification-toast', { hasText: 'exported 50 review(s)' }).waitFor({ timeout: 30_000 });
    assert.equal(readFileSync(csv, 'utf8').trim().split('\n').length, QUEUE + 1, 'a header and 50 rows');
    assert.match(readFileSync(join(workspace, 'dr-lee-reviews.kappa.md'), 'utf8'), /dr-lee[\s\S]*reward/);
    await page.close();
  });
});

/** The README's picture of a review: taken here, on the demo, mid-queue. */
async function screenshotForDocs(page: Page): Promise<void> {
  const file = await screenshot(page, 'review');
  mkdirSync(join(ROOT, 'docs/images'), { recursive: true });
  copyFileSync(file, join(ROOT, 'docs/images/review.png'));
}
