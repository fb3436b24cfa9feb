import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clinicWorkspace } from './harness/clinic-workspace';
import { codeServerForSuite, focusPane, openMedrlContainer, pane, runCommand, runCommandAndPick, screenshot } from './harness/code-server';

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
    await page.close();
  });
});
