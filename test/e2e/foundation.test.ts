import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, openMedrlContainer, pane, runCommand, screenshot, codeServerForSuite } from './harness/code-server';

describe('foundation: the packaged extension in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  it('a new user sees the MedRL container, its four views and their welcome text, and can create medrl.yaml', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'medrl-empty-'));
    const page = await cs.open(folder);
    await openMedrlContainer(page);
    for (const view of ['Hosts', 'Datasets', 'Runs', 'Checkpoints']) {
      await pane(page, view).locator('.pane-header').waitFor();
    }
    await pane(page, 'Hosts').getByText('No hosts yet.').waitFor();
    await pane(page, 'Datasets').getByText('No dataset roots.').waitFor();
    await pane(page, 'Runs').getByText('No runs yet.').waitFor();
    await pane(page, 'Checkpoints').getByText('No checkpoints yet.').waitFor();
    await screenshot(page, 'foundation-welcome');

    // The welcome view's button writes a starter medrl.yaml; the hosts view then lists the built-in local host.
    await pane(page, 'Hosts').getByRole('button', { name: 'Create medrl.yaml' }).click();
    await pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'local' }).waitFor({ timeout: 20_000 });
    await pane(page, 'Hosts').getByText('local processes · ready').waitFor();
    assert.ok(existsSync(join(folder, 'medrl.yaml')), 'medrl.yaml was written into the workspace');
    assert.match(readFileSync(join(folder, 'medrl.yaml'), 'utf8'), /^version: 1$/m);
    await screenshot(page, 'foundation-created-config');

    const log = cs.extensionLog();
    const m = /activated in ([\d.]+) ms \(CPU ([\d.]+) ms; bundle load ([\d.]+) ms/.exec(log);
    assert.ok(m, `the extension log reports its activation time:\n${log}`);
    const [activateMs, cpuMs, loadMs] = [Number(m[1]), Number(m[2]), Number(m[3])];
    console.log(
      `[e2e] activation: activate() ${activateMs} ms wall, ${cpuMs} ms CPU; bundle load ${loadMs} ms (target: activate under 50 ms)`,
    );
    // The CPU time is the work activate() does; its wall time also counts the time code-server's own start, on the
    // same cores, takes the processor away (82 ms once in CI for 20 ms of work).
    assert.ok(cpuMs < 50, `activate() used ${cpuMs} ms of CPU`);
    await page.close();
  });

  it('the demo workspace shows the local host and the real datasets; a command runs from the command palette', async () => {
    const home = mkdtempSync(join(tmpdir(), 'medrl-demo-'));
    const demo = join(home, 'demo');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
    const page = await cs.open(demo);
    await openMedrlContainer(page);
    await pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'local' }).waitFor({ timeout: 20_000 });
    const datasets = pane(page, 'Datasets');
    await datasets.locator('.monaco-list-row', { hasText: 'Demo data (PubMedQA, MEDEC)' }).waitFor();
    await datasets.locator('.monaco-list-row[aria-level="2"]', { hasText: 'pubmedqa' }).click();
    await datasets.locator('.monaco-list-row', { hasText: 'ori_pqal-first200.json' }).waitFor();
    await runCommand(page, 'MedRL: Validate medrl.yaml');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'medrl.yaml is valid' });
    await toast.waitFor({ timeout: 20_000 });
    assert.match(await toast.innerText(), /1 host\(s\), 0 judge\(s\), 1 dataset root\(s\)/);
    await screenshot(page, 'foundation-demo');
    await page.close();
  });

  it('an invalid medrl.yaml shows each error with its line, in the Problems panel and the hosts view', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'medrl-bad-'));
    writeFileSync(join(folder, 'medrl.yaml'), 'version: 1\nhosts:\n  local: {}\ndefaults:\n  host: gpu-box\n');
    const page = await cs.open(folder);
    await openMedrlContainer(page);
    const hostsError = pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'medrl.yaml has 1 error(s)' });
    await hostsError.waitFor({ timeout: 20_000 });
    assert.match(await hostsError.innerText(), /line 5: unknown host "gpu-box"/);
    await runCommand(page, 'View: Focus Problems');
    const problem = page.locator('.markers-panel .monaco-list-row', { hasText: 'defaults.host: unknown host "gpu-box"' });
    await problem.waitFor({ timeout: 20_000 });
    assert.match(await problem.innerText(), /\[Ln 5, Col 3\]/);
    await screenshot(page, 'foundation-invalid-config');
    await page.close();
  });
});
