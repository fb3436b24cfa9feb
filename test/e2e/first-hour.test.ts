import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import {
  ROOT,
  codeServerForSuite,
  focusPane,
  openMedrlContainer,
  pane,
  openAndPick,
  runCommandAndPick,
  screenshot,
  trustWorkspace,
} from './harness/code-server';
import { playgroundFrame, webviewWith } from './harness/playground-frame';

/** The README's and the walkthrough's pictures: taken here, on the demo, so they show the product as it is. */
const IMAGES = join(ROOT, 'docs/images');

async function picture(page: Page, name: string): Promise<void> {
  const file = await screenshot(page, `first-hour-${name}`);
  mkdirSync(IMAGES, { recursive: true });
  copyFileSync(file, join(IMAGES, `${name}.png`));
}

/** A step of the walkthrough: its title expands it; its button runs the step's command. */
async function walkthroughButton(page: Page, step: string, button: string): Promise<Locator> {
  const walkthrough = page.locator('.gettingStartedContainer');
  await walkthrough.locator('button.getting-started-step:visible', { hasText: step }).first().click();
  const b = walkthrough
    .locator('button.getting-started-step.expanded .button-container a.monaco-button:visible', { hasText: button })
    .first();
  await b.waitFor({ timeout: 10_000 });
  return b;
}

describe('the first hour: a new user walks the demo from a fresh profile, workspace trust on', () => {
  // The demo's own settings (what scripts/demo.sh gives its profile): trust on, VS Code asks at once, AI chat hidden.
  const cs = codeServerForSuite(JSON.parse(readFileSync(join(ROOT, 'scripts/demo-settings.json'), 'utf8')) as Record<string, unknown>);

  it('trusts the demo, submits its run from the walkthrough, then opens its dashboard and an episode from the palette', async () => {
    const workspace = join(mkdtempSync(join(tmpdir(), 'medrl-e2e-first-hour-')), 'workspace');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', workspace], { encoding: 'utf8' });
    const started = Date.now();
    const page = await cs.open(workspace);

    // VS Code asks whether the folder's authors are trusted: medrl demo made it, so the answer is yes.
    await trustWorkspace(page);
    // Trusted: the Restricted Mode item leaves the status bar.
    await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).waitFor({ state: 'detached', timeout: 15_000 });

    // The walkthrough opens by itself in the demo; the AI chat does not.
    const walkthrough = page.locator('.gettingStartedContainer');
    await walkthrough.locator('h2.category-title:visible', { hasText: 'Get started with MedRL Studio' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.part.auxiliarybar:visible').count(), 0, 'no chat panel over the editor');
    await picture(page, 'walkthrough');

    // Step: submit the demo run. The button asks which spec; the demo's local spec is listed first.
    const submit = await walkthroughButton(page, 'Submit the demo run', 'Submit a Run Spec');
    await openAndPick(
      page,
      'Submit a Run Spec',
      async () => {
        await submit.click();
        const first = page.locator('.quick-input-list .monaco-list-row').first();
        await first.waitFor({ timeout: 30_000 });
        assert.match(await first.innerText(), /demo-pubmedqa-grpo/, 'the spec that runs on this machine comes first');
      },
      'demo-pubmedqa-grpo',
    );
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'submitted demo-pubmedqa-grpo' })
      .waitFor({ timeout: 60_000 });

    await openMedrlContainer(page);
    await focusPane(page, 'Runs');
    const run = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'demo-pubmedqa-grpo' });
    await run.waitFor({ timeout: 30_000 });
    await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'succeeded' }).waitFor({ timeout: 120_000 });
    await picture(page, 'runs');

    // Its curves: from the palette, nothing selected; the command asks which run.
    await runCommandAndPick(page, 'MedRL: Open Run Dashboard', 'demo-pubmedqa-grpo');
    const dashboard = await webviewWith(page, 'main.charts', 'run dashboard');
    await dashboard.locator('section.chart[data-chart="reward"]').waitFor({ timeout: 60_000 });
    await dashboard.locator('section.chart[data-chart="reward"] .u-over').waitFor({ timeout: 30_000 });
    await picture(page, 'dashboard');

    // An episode: the same, from the palette.
    await runCommandAndPick(page, 'MedRL: Open Episode Replay', 'demo-pubmedqa-grpo');
    const replay = await webviewWith(page, '.vlist-row', 'episode replay');
    await replay.locator('.vlist-row[data-index]').first().waitFor({ timeout: 60_000 });
    await replay.locator('.episode .ep-title').first().waitFor({ timeout: 30_000 });
    const walkSeconds = (Date.now() - started) / 1000;
    console.log(`[first-hour] fresh profile to the first replayed episode: ${walkSeconds.toFixed(1)} s`);
    await picture(page, 'replay');

    // The last two screens of the README: a dataset preview and the reward playground.
    await runCommandAndPick(page, 'MedRL: Preview Dataset', /train\.parquet[\s\S]*pubmedqa/);
    const dataset = await webviewWith(page, '.table-header', 'dataset preview');
    await dataset.locator('.meta', { hasText: 'verl RL rows · 180 rows' }).waitFor({ timeout: 60_000 });
    await picture(page, 'dataset');

    // A reward function tried on the run's own answers: back-test from the palette, the run asked for.
    await runCommandAndPick(page, "MedRL: Back-test a Reward Function on a Run's Rollouts", 'demo-pubmedqa-grpo');
    const playground = await playgroundFrame(page);
    await playground.locator('#status', { hasText: /\d+ samples from local:.*\/rollouts/ }).waitFor({ timeout: 30_000 });
    await playground.locator('#scorer-a').click();
    await playground.locator('#scorer-a li[role="option"]', { hasText: 'multiple_choice_exact.py:compute_score' }).click();
    await playground.locator('#run-all').click();
    await playground.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 90_000 });
    await playground.locator('#summary', { hasText: 'Back-test: A against the training scores' }).waitFor();
    // One answer read in full: its row opens under it.
    await playground.locator('#results tbody tr.sample').nth(2).click();
    await playground.locator('#results tbody tr.sample[aria-expanded="true"]').waitFor();
    await picture(page, 'playground');
    await page.close();
  });
});
