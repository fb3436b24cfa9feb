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

  async function submitAndWatch(hostName: string): Promise<void> {
    const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-runs-'));
    const demo = join(home, 'demo');
    const runsDir = join(home, 'runs');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
    const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
    cfg.setIn(['hosts', 'local', 'runsDir'], runsDir);
    cfg.setIn(['hosts', 'gpubox'], cfg.createNode({ runsDir: '~/medrl-runs', setup: cfg.getIn(['hosts', 'local', 'setup']) }));
    writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
    // A pace a user can watch: the run stays running for a few seconds.
    const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
    spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '1');
    spec.set('host', hostName);
    spec.set('workdir', demo); // the loopback host shares this machine's files
    writeFileSync(join(demo, 'configs/local-demo.yaml'), spec.toString());

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
});
