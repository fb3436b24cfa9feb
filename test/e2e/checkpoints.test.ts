import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { CodeServer, openContextMenu, openMedrlContainer, screenshot } from './harness/code-server';
import { writeStandInRun } from '../fixtures/stand-in-checkpoints';

function pane(page: Page, title: string) {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) }).first();
}

describe('checkpoints and services in real VS Code (code-server + Chromium)', () => {
  const cs = new CodeServer();
  let runs = '';
  before(async () => {
    // The stand-in vLLM answers /health with 503 for a second, so the service is seen starting, then ready.
    process.env.MEDRL_STANDIN_STARTUP_SECONDS = '1';
    await cs.start();
    // code-server's HOME is cs.home: the local host's runs folder is ~/.medrl/runs there.
    runs = join(cs.home, '.medrl/runs');
    writeStandInRun(runs, { id: 'doctor-sft', framework: 'trl', steps: [50, 100] });
    writeStandInRun(runs, { id: 'pubmedqa-grpo', framework: 'verl', steps: [10, 20], critic: true });
  });
  after(async () => {
    // Stop the services the test started (their process groups), by the pids their run folders recorded.
    for (const id of readdirSync(runs)) {
      const run = JSON.parse(readFileSync(join(runs, id, 'run.json'), 'utf8')) as { kind?: string; pgid?: number };
      if (run.kind === 'service' && run.pgid) {
        try {
          process.kill(-run.pgid, 'SIGTERM');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      }
    }
    await cs.stop();
  });

  it("the checkpoints tree lists a stand-in run's checkpoints; serving one makes it a ready service", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'medrl-ck-'));
    writeFileSync(join(folder, 'medrl.yaml'), 'version: 1\nhosts:\n  local: {}\n');
    const page = await cs.open(folder);
    await openMedrlContainer(page);
    const cks = pane(page, 'Checkpoints');
    const latest = cks.locator('.monaco-list-row', { hasText: 'checkpoint-100 (latest)' });
    await latest.waitFor({ timeout: 30_000 });
    assert.match(await latest.innerText(), /step 100 · [\d.]+ KiB · \d+ s ago/);
    await cks.locator('.monaco-list-row', { hasText: 'checkpoint-50' }).waitFor();
    await cks.locator('.monaco-list-row', { hasText: 'global_step_20 (latest)' }).waitFor();
    await cks.locator('.monaco-list-row', { hasText: 'pubmedqa-grpo' }).waitFor();
    await screenshot(page, 'checkpoints-tree');

    // The context menu lists what a servable checkpoint offers; Serve is also the row's inline action.
    await openContextMenu(page, latest, 'Serve Checkpoint');
    for (const action of ['Resume Training from Checkpoint', 'Download to Workspace', 'Delete Checkpoint']) {
      await page.getByRole('menuitem', { name: action }).first().waitFor();
    }
    await page.keyboard.press('Escape');
    await latest.hover();
    await latest.locator('.action-label[aria-label="Serve Checkpoint"]').click();
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'vLLM' }).first().click();
    const services = pane(page, 'Services');
    const row = services.locator('.monaco-list-row', { hasText: 'doctor_sft_step100' });
    await row.waitFor({ timeout: 30_000 });
    await services
      .locator('.monaco-list-row', { hasText: /doctor_sft_step100.*ready · doctor_sft_step100 · vllm · local:\d+ · stand-in/ })
      .waitFor({ timeout: 60_000 });
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'doctor_sft_step100 is ready at http://127.0.0.1:' })
      .waitFor({ timeout: 30_000 });
    await screenshot(page, 'checkpoints-service-ready');
    const log = cs.extensionLog();
    assert.match(log, /service doctor_sft_step100 \(vllm, .*doctor-sft\/output\/checkpoint-100\)/);
    assert.doesNotMatch(log, /medrl-[A-Za-z0-9_-]{32}/, 'the generated API key is never logged');
    await page.close();
  });
});
