import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import {
  codeServerForSuite,
  fillQuickInput,
  focusPane,
  openMedrlContainer,
  pane,
  openFile,
  runCommand,
  screenshot,
} from './harness/code-server';
import { leaks, makeHostileWorkspace } from '../integration/hardening/hostile-workspace-fixture';

/** Everything the page shows, its webviews' frames included, and the extension's log. */
async function shown(page: Page, log: string): Promise<string> {
  const frames = await Promise.all(page.frames().map((f) => f.content().catch(() => '')));
  return [...frames, log].join('\n');
}

/** Whether the palette offers a command (typed as a user does); closes the palette. */
async function inPalette(page: Page, title: string): Promise<boolean> {
  await page.keyboard.press('F1');
  await fillQuickInput(page, `>${title}`);
  const found = await page
    .locator('.quick-input-list .monaco-list-row', { hasText: title })
    .first()
    .waitFor({ timeout: 4000 })
    .then(
      () => true,
      () => false,
    );
  await page.keyboard.press('Escape');
  return found;
}

describe('hostile workspace in Restricted Mode (real code-server, workspace trust on, the folder not trusted)', () => {
  const cs = codeServerForSuite({
    'security.workspace.trust.enabled': true,
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.banner': 'always',
  });

  it('views, palette commands and view actions run nothing and read nothing outside the workspace', async () => {
    const h = makeHostileWorkspace();
    const actions: string[] = [];
    const page = await cs.open(h.dir);
    await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 30_000 });
    await openMedrlContainer(page);
    actions.push('open the MedRL views');
    // Hosts: nothing is asked of any host.
    await pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'evil' }).first().click();
    await pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'Untrusted workspace' }).first().waitFor({ timeout: 20_000 });
    actions.push('expand a host');

    // Every command the palette offers here that reaches a host or runs something must be missing.
    await openFile(page, 'evil.yaml');
    for (const title of [
      'MedRL: Preview Launch Script',
      'MedRL: Submit Run Spec',
      "MedRL: Start the Run Spec's Services",
      'MedRL: Merge to HuggingFace',
      'MedRL: Serve a Model',
      'MedRL: Upload Dataset to Host',
    ]) {
      assert.equal(await inPalette(page, title), false, `"${title}" is offered in Restricted Mode`);
      actions.push(`palette: ${title}`);
    }
    await runCommand(page, 'MedRL: Refresh');
    actions.push('palette: MedRL: Refresh');
    await runCommand(page, 'MedRL: Validate medrl.yaml');
    actions.push('palette: MedRL: Validate medrl.yaml');

    // Datasets: the root outside the workspace is not listed; a file linked out of it is not previewed.
    await focusPane(page, 'Datasets');
    const datasets = pane(page, 'Datasets');
    await datasets
      .locator('.monaco-list-row', { hasText: /outside the workspace|cannot read/ })
      .first()
      .waitFor({ timeout: 30_000 });
    actions.push('list a dataset root outside the workspace');
    const linked = datasets.locator('.monaco-list-row', { hasText: 'linked.jsonl' }).first();
    await linked.locator('.label-description', { hasText: 'unreadable' }).waitFor({ timeout: 30_000 });
    await linked.click();
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'outside the workspace' })
      .first()
      .waitFor({ timeout: 30_000 });
    actions.push('preview a dataset file linked out of the workspace');
    await datasets.locator('.monaco-list-row', { hasText: 'evil.jsonl' }).first().click();
    actions.push('preview a dataset with escape codes and HTML');
    await page.waitForTimeout(3000);
    await screenshot(page, 'hostile-workspace-restricted');

    // Runs, Checkpoints and Services list nothing: listing would read runsDir and run the scheduler's commands.
    await focusPane(page, 'Runs');
    assert.equal(
      await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'evil' }).count(),
      0,
      'the Runs view listed a run folder of the hostile runsDir',
    );
    actions.push('list runs');
    // Instead, the view says what trust unlocks, with a button to the trust editor.
    const welcome = pane(page, 'Runs').locator('.welcome-view-content');
    await welcome.getByText('Trusting it lets you submit its run specs', { exact: false }).waitFor({ timeout: 10_000 });
    await welcome.getByRole('button', { name: 'Trust this Folder…' }).click();
    await page.locator('.workspace-trust-editor').first().waitFor({ timeout: 10_000 });
    await page.keyboard.press('Escape');
    actions.push('open Manage Workspace Trust from the Runs view');

    const text = await shown(page, cs.extensionLog());
    const executed = h.executed();
    const readOutside = leaks(h, text) ? ['the page or the extension log shows a file from outside the workspace'] : [];
    console.log(
      `[hostile-workspace] Restricted Mode: ${h.attacks.size} attacks tried (${actions.length} actions): ${executed.length} executed, ${readOutside.length} read outside`,
    );
    assert.deepEqual(executed, [], 'attacks whose code ran');
    assert.deepEqual(readOutside, []);
    await page.close();
  });
});

describe('"Add Host" edits medrl.yaml without losing what the user typed (trusted workspace)', () => {
  // VS Code for the Web saves after a delay by default: off, as on the desktop, so the editor keeps unsaved changes.
  const cs = codeServerForSuite({ 'files.autoSave': 'off' });

  it('an open medrl.yaml with unsaved changes gets the host in the editor; the save keeps both, and CRLF', async () => {
    mkdirSync(join(cs.home, '.ssh'), { recursive: true });
    writeFileSync(join(cs.home, '.ssh/config'), 'Host gpubox2\n  HostName 127.0.0.1\n');
    const ws = mkdtempSync(join(tmpdir(), 'medrl-e2e-edit-'));
    const original = 'version: 1\r\nhosts:\r\n  local: {}\r\n';
    writeFileSync(join(ws, 'medrl.yaml'), original);
    const page = await cs.open(ws);
    await openFile(page, 'medrl.yaml');
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('# typed, not saved');
    await page.keyboard.press('Enter');
    await page.locator('.tab.dirty', { hasText: 'medrl.yaml' }).waitFor();
    await runCommand(page, 'MedRL: Add Host from SSH Config');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'gpubox2' }).first().click();
    const lines = page.locator('.monaco-editor .view-lines').first();
    await lines.locator('.view-line', { hasText: 'ssh: gpubox2' }).waitFor({ timeout: 20_000 });
    // Monaco renders spaces as no-break spaces.
    assert.match((await lines.innerText()).replace(/\u00a0/g, ' '), /# typed, not saved/, 'the unsaved line is still in the editor');
    assert.equal(readFileSync(join(ws, 'medrl.yaml'), 'utf8'), original, 'the file on disk is not written behind the editor');
    await page.keyboard.press('Control+S');
    await page.locator('.tab.dirty', { hasText: 'medrl.yaml' }).waitFor({ state: 'detached' });
    const saved = readFileSync(join(ws, 'medrl.yaml'), 'utf8');
    assert.match(saved, /^# typed, not saved\r\n/);
    assert.match(saved, /gpubox2:\r\n +ssh: gpubox2\r\n/);
    assert.equal(saved.replace(/\r\n/g, '').includes('\n'), false, 'CRLF stays CRLF');
    await page.close();
  });
});
