import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { clinicWorkspace } from './harness/clinic-workspace';
import {
  ROOT,
  codeServerForSuite,
  focusPane,
  openMedrlContainer,
  pane,
  runCommand,
  runCommandAndPick,
  screenshot,
} from './harness/code-server';

// What is planted: a phone number (its count is asserted), an email and a name; none of their text may show.
const PLANTED = ['617-555-0142', 'jane.roe@example.org', 'Jane Roe'];

function assertNoPlanted(text: string, what: string): void {
  for (const p of PLANTED) assert.ok(!text.includes(p), `${what} does not quote "${p}": ${text}`);
}

describe('scanning a dataset for identifiers in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  it('from the palette: the notification and the Datasets tooltip show counts per category, never the text; a redacted copy is written', async () => {
    const ws = clinicWorkspace(
      'medrl-phi-scan-',
      (i) => `Patient: Jane Roe. Case ${i}: call back at 617-555-0142 or write to jane.roe@example.org.`,
    );
    // A run spec that trains on the file.
    mkdirSync(join(ws, 'configs/rewards'), { recursive: true });
    copyFileSync(join(ROOT, 'configs/rewards/multiple_choice_exact.py'), join(ws, 'configs/rewards/multiple_choice_exact.py'));
    writeFileSync(
      join(ws, 'configs/clinic-grpo.yaml'),
      [
        'name: clinic-grpo',
        'framework: verl',
        'algorithm: grpo',
        'host: local',
        'model: Qwen/Qwen2.5-0.5B-Instruct',
        'data:',
        '  train: data/clinic.jsonl',
        'reward:',
        '  path: configs/rewards/multiple_choice_exact.py',
        '  function: compute_score',
        '',
      ].join('\n'),
    );
    const page = await cs.open(ws);
    await openMedrlContainer(page);
    await focusPane(page, 'Datasets');
    const row = pane(page, 'Datasets').locator('.monaco-list-row', { hasText: 'clinic.jsonl' });
    await row.waitFor({ timeout: 30_000 });

    // Nothing selected and no file open: the command asks which dataset.
    await runCommandAndPick(page, 'MedRL: Scan Dataset for Identifiers', 'clinic.jsonl');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: /\d+ identifiers? in clinic\.jsonl: .*\d+ phone/ });
    await toast.waitFor({ timeout: 60_000 });
    const note = await toast.innerText();
    assert.match(note, /\b3 phone\b/, 'three rows, one phone number each');
    assertNoPlanted(note, 'the notification');
    await screenshot(page, 'phi-scan-notification');

    // The notification's button (before the toast hides) writes a redacted copy beside the file (the path it proposes).
    await toast.locator('a.monaco-button, .monaco-button', { hasText: 'Write Redacted Copy' }).click();
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    assert.match(await input.inputValue(), /data\/clinic\.redacted\.jsonl$/);
    await page.keyboard.press('Enter');
    const copy = join(ws, 'data/clinic.redacted.jsonl');
    for (let t = Date.now(); !existsSync(copy) && Date.now() - t < 60_000;) await page.waitForTimeout(200);
    assert.ok(existsSync(copy), 'the redacted copy is written');
    // Its toast may hide before a loaded machine looks (VS Code hides information toasts): read it in the Notification Center.
    await runCommand(page, 'Notifications: Show Notifications');
    await page
      .locator('.notifications-center .notification-list-item-message', { hasText: 'wrote clinic.redacted.jsonl' })
      .waitFor({ timeout: 30_000 });
    await page.keyboard.press('Escape');
    const redacted = readFileSync(copy, 'utf8');
    assert.match(redacted, /\[PHONE\]/);
    assert.ok(!redacted.includes('617-555-0142'), 'the copy holds no phone number');

    // The tooltip of the file in the Datasets view says the same counts, with the scan's age.
    await row.hover();
    const hover = page.locator('.monaco-hover, .workbench-hover', { hasText: 'Identifiers (scanned' }).first();
    await hover.waitFor({ timeout: 20_000 });
    // The tooltip is markdown: its spaces are non-breaking.
    const tip = (await hover.innerText()).replace(/\u00a0/g, ' ');
    assert.match(tip, /Identifiers \(scanned \d+ (s|min) ago\): .*3 phone/);
    assertNoPlanted(tip, 'the tooltip');
    await screenshot(page, 'phi-scan-tooltip');

    // Uploading the file, or submitting a run that trains on it, stops first with the scan's counts (never the text);
    // Cancel uploads and submits nothing.
    await runCommandAndPick(page, 'MedRL: Upload Dataset to Host…', 'clinic.jsonl');
    await cancelWarning(page, /clinic\.jsonl holds \d+ identifiers \(.*3 phone.*\)\. Upload anyway\?/);
    await runCommandAndPick(page, 'MedRL: Submit Run Spec', 'clinic-grpo');
    await cancelWarning(page, /clinic\.jsonl holds \d+ identifiers \(.*3 phone.*\)\. Submit anyway\?/);
    await page.waitForTimeout(1000);
    const toasts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts();
    assert.ok(!toasts.some((t) => /submitted|uploaded/.test(t)), `nothing was submitted or uploaded: ${toasts.join(' | ')}`);
    await page.close();
  });
});

/** The modal warning before an upload or a submit: its text says `counts`, quotes nothing planted, and Cancel closes it. */
async function cancelWarning(page: Page, counts: RegExp): Promise<void> {
  const dialog = page.locator('.monaco-dialog-box', { hasText: 'identifiers' });
  await dialog.waitFor({ timeout: 60_000 });
  const text = (await dialog.innerText()).replace(/\s+/g, ' ');
  assert.match(text, counts);
  assertNoPlanted(text, 'the warning');
  await screenshot(page, `phi-warning-${/Upload anyway/.test(text) ? 'upload' : 'submit'}`);
  await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
}
