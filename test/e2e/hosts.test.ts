import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeServerWithSshd, ROOT, openMedrlContainer, runCommand, screenshot, pane, focusPane } from './harness/code-server';
import { writeRunFolder } from '../fixtures/run-folders';

describe('hosts: the hosts tree in real VS Code (code-server + Chromium) with a real sshd on loopback', () => {
  const { cs, sshd } = codeServerWithSshd('gpubox');

  it('shows the loopback host connected, with its GPUs, free disk and active runs; checks its environment', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'medrl-hosts-ws-'));
    writeFileSync(
      join(folder, 'medrl.yaml'),
      [
        'version: 1',
        'hosts:',
        '  gpubox:',
        '    runsDir: ~/medrl-runs',
        '    setup:',
        `      - export PATH=${join(ROOT, 'test/fixtures/nvidia-smi/standin')}:$PATH  # stand-in nvidia-smi (real H200 capture)`,
        '',
      ].join('\n'),
    );
    // The loopback host shares this machine's processes: this test's pid is alive there.
    const runs = join(sshd().remoteHome, 'medrl-runs');
    writeRunFolder(runs, 'grpo-1', { pid: process.pid, host: 'gpubox' });
    writeRunFolder(runs, 'grpo-2', { pid: process.pid, host: 'gpubox' });
    writeRunFolder(runs, 'old', { pid: process.pid, exitCode: 0, host: 'gpubox' });

    const page = await cs.open(folder);
    await openMedrlContainer(page);
    await focusPane(page, 'Hosts');
    const hosts = pane(page, 'Hosts');
    const row = hosts.locator('.monaco-list-row', { hasText: 'gpubox' });
    await row.waitFor({ timeout: 20_000 });
    // The runs view lists runs on every host when it opens, so the host may already be connecting.
    assert.match(await row.innerText(), /ssh gpubox · (not connected|connecting…|connected)/);
    await row.click();
    await hosts.locator('.monaco-list-row', { hasText: 'GPU 1: NVIDIA H200' }).waitFor({ timeout: 30_000 });
    await row.locator('text=connected').first().waitFor();
    assert.match(await row.innerText(), /ssh gpubox · connected/);
    assert.match(
      await hosts.locator('.monaco-list-row', { hasText: 'GPU 0: NVIDIA H200' }).innerText(),
      /6\.6\/140\.4 GiB · 100% · 1 process/,
    );
    assert.match(await hosts.locator('.monaco-list-row', { hasText: 'Disk' }).innerText(), /free of/);
    assert.match(await hosts.locator('.monaco-list-row', { hasText: 'Active runs' }).innerText(), /2 of 3/);
    await screenshot(page, 'hosts-connected');

    await runCommand(page, 'MedRL: Check Host Environment');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'gpubox' }).click();
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'gpubox: Python 3.' });
    await toast.waitFor({ timeout: 30_000 });
    assert.match(await toast.innerText(), /2 GPU\(s\), torch not installed/);
    await hosts.locator('.monaco-list-row', { hasText: 'Environment' }).waitFor({ timeout: 10_000 });
    await screenshot(page, 'hosts-environment');
    assert.match(cs.extensionLog(), /gpubox: connected|gpubox: Python/);
    await page.close();
  });
});
