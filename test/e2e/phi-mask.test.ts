import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Locator } from 'playwright-core';
import { codeServerForSuite, focusPane, openMedrlContainer, pane, runContextMenuItem, screenshot } from './harness/code-server';
import { webviewWith } from './harness/playground-frame';
import { clinicWorkspace } from './harness/clinic-workspace';

// Invented identifiers of several categories; the chip checks use the phones, and none of them may reach a page.
const PHONES = ['617-555-0142', '508-555-0199'] as const;
const EMAIL = 'jane.doe@example.org';
const PATIENT = 'Patient: Jane Roe, MRN 00482913, admitted on 03/14/2021.';
const PLANTED = [...PHONES, EMAIL, 'Jane Roe', '00482913', '03/14/2021'];

/** Waits until no planted identifier is anywhere in the page (text or attributes) and chips stand in for them. */
async function assertMasked(frame: Frame, what: string): Promise<void> {
  await frame.waitForFunction((planted) => !planted.some((p) => document.documentElement.outerHTML.includes(p)), PLANTED, {
    timeout: 20_000,
  });
  await frame.locator('#phi-mask-status', { hasText: /^\d+ identifiers? masked \((\d+ \w+, )*\d+ phone/ }).waitFor();
  const chip = frame.locator('.phi-chip', { hasText: '[PHONE]' }).first();
  assert.equal(await chip.textContent(), '[PHONE]', `${what}: a chip shows the placeholder`);
  assert.equal(await chip.getAttribute('title'), 'phone number identifier masked', `${what}: the chip's hover names the category`);
  const html = await frame.content();
  const text = await frame.locator('body').innerText();
  for (const p of PLANTED) assert.ok(!html.includes(p) && !text.includes(p), `${what}: ${p} is not in the page`);
  assert.ok(await frame.locator('#phi-mask').isChecked(), `${what}: the toggle is on`);
}

/** Turns masking off in the page, waits for `shown` to show the planted text, and turns it on again. */
async function toggleOffAndOn(frame: Frame, shown: Locator, what: string): Promise<void> {
  await frame.locator('#phi-mask').click();
  await shown.first().waitFor({ timeout: 20_000 });
  await frame.locator('#phi-mask-status', { hasText: 'Identifiers shown as written' }).waitFor();
  await frame.waitForFunction(() => !document.querySelector('.phi-chip'), undefined, { timeout: 20_000 });
  await frame.locator('#phi-mask').click();
  await assertMasked(frame, `${what}, masked again`);
}

describe('masking identifiers in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  it('episode replay, reward playground and dataset preview show [PHONE] chips, never the numbers; the toggle shows them', async () => {
    const ws = clinicWorkspace(
      'medrl-phi-',
      (i) => `Case ${i}: ${PATIENT} Call back at ${PHONES[0]} or write to ${EMAIL}. Is the blood pressure controlled?`,
      // An identifier can be a key too (a dataset keyed by contact): it must not reach the page either.
      { contact: PHONES[1], [EMAIL]: 'next of kin' },
    );
    mkdirSync(join(ws, 'clinic-run'));
    writeFileSync(
      join(ws, 'clinic-run/1.jsonl'),
      [0, 1]
        .map((i) =>
          JSON.stringify({
            input: `<|im_start|>user\nCase ${i}: ${PATIENT} The patient's number is ${PHONES[0]}. Controlled?<|im_end|>\n<|im_start|>assistant\n`,
            output: `I called ${PHONES[1]} and wrote to ${EMAIL}. <answer>yes</answer>`,
            gts: 'yes',
            score: 1,
            step: 1,
            data_source: 'clinic',
            note: `callback ${PHONES[0]}`,
            callers: { [PHONES[1]]: 'daughter' },
          }),
        )
        .join('\n') + '\n',
    );
    // A reward function whose details quote a number, as a judge's answer can.
    writeFileSync(
      join(ws, 'callback_reward.py'),
      `def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {"score": 1.0, "note": "callback ${PHONES[0]}"}\n`,
    );
    const page = await cs.open(ws);

    // Episode replay, from the explorer.
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'clinic-run' }).first().click();
    const file = page.locator('.explorer-folders-view .monaco-list-row', { hasText: '1.jsonl' }).first();
    await file.waitFor({ timeout: 30_000 });
    await runContextMenuItem(page, file, 'Open Episode Replay');
    const replay = await webviewWith(page, '.episode .ep-title', 'episode replay');
    await replay.locator('.episode .turn.role-assistant').first().waitFor({ timeout: 30_000 });
    await assertMasked(replay, 'episode replay');
    await replay.locator('.episode .turn.role-assistant .phi-chip').first().waitFor();
    await screenshot(page, 'phi-mask-replay');
    await toggleOffAndOn(replay, replay.locator('.episode .turn', { hasText: PHONES[1] }), 'episode replay');

    // The reward playground, with the open episode sent to it.
    await replay.locator('#send-one').click();
    const playground = await webviewWith(page, '#results', 'reward playground');
    await playground.locator('#status', { hasText: 'samples from episode replay' }).waitFor({ timeout: 20_000 });
    await assertMasked(playground, 'reward playground');
    await playground.locator('#results td.solution .phi-chip').first().waitFor();
    await playground.locator('#run-all').click();
    await playground.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 60_000 });
    await playground.locator('#results tr.sample[data-index="0"] td.index').click();
    await playground.locator('#detail-0 .side-a pre.detail .phi-chip').waitFor();
    await assertMasked(playground, 'reward playground, scored');
    await screenshot(page, 'phi-mask-playground');
    await toggleOffAndOn(playground, playground.locator('#results td.solution', { hasText: PHONES[1] }), 'reward playground');

    // The dataset preview, from the Datasets view.
    await openMedrlContainer(page);
    await focusPane(page, 'Datasets');
    await pane(page, 'Datasets').locator('.monaco-list-row', { hasText: 'clinic.jsonl' }).first().click({ timeout: 30_000 });
    const dataset = await webviewWith(page, '.dataset-row', 'dataset preview');
    await dataset.locator('.dataset-row[data-index="2"]').waitFor({ timeout: 30_000 });
    await dataset.locator('.dataset-row[data-index="0"]').click();
    await dataset.locator('.detail h2', { hasText: 'Row 1' }).waitFor();
    await assertMasked(dataset, 'dataset preview');
    await dataset.locator('.detail .phi-chip').first().waitFor();
    await screenshot(page, 'phi-mask-dataset');
    await toggleOffAndOn(dataset, dataset.locator('.detail', { hasText: PHONES[1] }), 'dataset preview');
    await page.close();
  });
});
