import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { codeServerWithSshd, ROOT, openMedrlContainer, openFile, runCommand, screenshot, pane } from './harness/code-server';

describe('runs: submit the demo spec in real VS Code and watch it in the Runs view', () => {
  const { cs, sshd } = codeServerWithSshd('gpubox');

  it('submitting configs/local-demo.yaml on local shows the run running, then succeeded', () => submitAndWatch('local'));

  it('the same spec on the loopback SSH host (a real sshd) goes running → succeeded in the tree', () => submitAndWatch('gpubox'));

  /** The demo workspace with its runs in a temp folder, the loopback SSH host, and configs/local-demo.yaml for `hostName`. */
  function demoWorkspace(hostName: string): { demo: string; runsDir: string } {
    const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-runs-'));
    const demo = join(home, 'demo');
    const runsDir = join(home, 'runs');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
    const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
    cfg.setIn(['hosts', 'local', 'runsDir'], runsDir);
    cfg.setIn(['hosts', 'gpubox'], cfg.createNode({ runsDir: '~/medrl-runs', setup: cfg.getIn(['hosts', 'local', 'setup']) }));
    writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
    // A pace a user can watch: the run stays running for a few seconds. The loopback host shares this machine's files.
    writeSpec(demo, 'local-demo', { host: hostName, workdir: demo }, { MEDRL_STANDIN_STEP_SECONDS: '1' });
    return { demo, runsDir };
  }

  /** configs/<file>.yaml: the demo spec with these fields and stand-in knobs. */
  function writeSpec(demo: string, file: string, fields: Record<string, string>, env: Record<string, string>): void {
    const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
    for (const [k, v] of Object.entries(fields)) spec.set(k, v);
    for (const [k, v] of Object.entries(env)) spec.setIn(['env', k], v);
    writeFileSync(join(demo, `configs/${file}.yaml`), spec.toString());
  }

  async function submitAndWatch(hostName: string): Promise<void> {
    const { demo, runsDir } = demoWorkspace(hostName);
    const page = await cs.open(demo);
    await openMedrlContainer(page);
    await openFile(page, 'local-demo.yaml');
    await runCommand(page, 'MedRL: Submit Run Spec');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'submitted demo-pubmedqa-grpo' })
      .waitFor({ timeout: 30_000 });

    const runs = pane(page, 'Runs');
    await runs.locator('.monaco-list-row', { hasText: hostName }).first().waitFor({ timeout: 30_000 });
    const row = runs.locator('.monaco-list-row', { hasText: 'demo-pubmedqa-grpo' });
    await row.waitFor({ timeout: 20_000 });
    await runs.locator('.monaco-list-row', { hasText: 'running' }).waitFor({ timeout: 20_000 });
    await screenshot(page, `runs-running-${hostName}`);
    await runs.locator('.monaco-list-row', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    assert.match(await row.innerText(), /succeeded · step \d+/);
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: `demo-pubmedqa-grpo (${hostName}) succeeded` })
      .waitFor({ timeout: 20_000 });
    await screenshot(page, `runs-succeeded-${hostName}`);
    const folder = hostName === 'local' ? runsDir : join(sshd().remoteHome, 'medrl-runs');
    const entries = readdirSync(folder);
    const id = entries.find((e) => existsSync(join(folder, e, 'run.json')));
    assert.ok(
      id && existsSync(join(folder, id, 'metrics.jsonl')),
      `the run folder has the trainer outputs (${folder}: ${entries.join(', ')}${id ? `; ${id}: ${readdirSync(join(folder, id)).join(', ')}` : ''})`,
    );
    await page.close();
  }

  it('a run submitted from the palette, with the Runs view never opened, shows in the status bar and is announced when it ends', async () => {
    const { demo } = demoWorkspace('local');
    writeSpec(demo, 'local-crash', { name: 'demo-crash' }, { MEDRL_STANDIN_STEP_SECONDS: '0.3', MEDRL_STANDIN_CRASH_AT_STEP: '2' });
    const page = await cs.open(demo);
    await openFile(page, 'local-demo.yaml');
    await runCommand(page, 'MedRL: Submit Run Spec');
    const active = page.locator('.statusbar-item', { hasText: '1 run' });
    await active.waitFor({ timeout: 30_000 });
    await active.hover();
    await page
      .locator('.monaco-hover, .workbench-hover', { hasText: /demo-pubmedqa-grpo · (queued|running) · local/ })
      .first()
      .waitFor({ timeout: 10_000 });
    await screenshot(page, 'runs-watch-status-bar');

    const done = page.locator('.notifications-toasts .notification-toast', { hasText: 'demo-pubmedqa-grpo (local) succeeded' });
    await done.waitFor({ timeout: 60_000 });
    assert.match(await done.innerText(), /succeeded · reward -?\d[\d.e+-]* at step \d+/, 'the last critic/score/mean');
    await done.getByRole('button', { name: 'Open Dashboard' }).waitFor();
    await active.waitFor({ state: 'hidden', timeout: 10_000 });
    await screenshot(page, 'runs-watch-succeeded');

    await openFile(page, 'local-crash.yaml');
    await runCommand(page, 'MedRL: Submit Run Spec');
    const failed = page.locator('.notifications-toasts .notification-toast', { hasText: 'demo-crash (local) failed (exit 1)' });
    await failed.waitFor({ timeout: 60_000 });
    assert.match(await failed.innerText(), /Last lines of its log:\s+[\s\S]*RuntimeError: stand-in: crash requested at step 2/);
    await screenshot(page, 'runs-watch-failed');
    await failed.getByRole('button', { name: 'Show Log' }).click();
    await page.locator('.part.panel', { hasText: 'crash requested at step 2' }).first().waitFor({ timeout: 20_000 });
    const log = cs.extensionLog();
    assert.match(log, /run demo-crash-[a-z0-9-]+ on local ended: failed/);
    assert.doesNotMatch(log, /crash requested/, 'the log text is shown, never logged');
    await page.close();
  });
});
