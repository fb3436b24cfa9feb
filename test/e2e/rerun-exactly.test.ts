import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ROOT, codeServerForSuite, focusPane, openMedrlContainer, pane, runContextMenuItem, trustWorkspace } from './harness/code-server';

const REWARD = 'configs/rewards/multiple_choice_exact.py';

/** The CLI with code-server's HOME: the same python3 on the local host as the extension finds (a re-run checks it). */
function cli(args: string[], cwd: string, home: string): string {
  return execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, HOME: home },
  });
}

describe('Re-run Exactly, in real VS Code (code-server + Chromium)', () => {
  // The demo's own settings: workspace trust on, a fresh profile.
  const cs = codeServerForSuite(JSON.parse(readFileSync(join(ROOT, 'scripts/demo-settings.json'), 'utf8')) as Record<string, unknown>);

  it('refused while a reward line differs (Show Differences opens that file), then re-runs once it is put back', async () => {
    const root = mkdtempSync(join(tmpdir(), 'medrl-e2e-rerun-'));
    const demo = join(root, 'demo');
    const runsDir = join(root, 'runs');
    cli(['demo', demo], root, cs.home);
    const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
    cfg.setIn(['hosts', 'local', 'runsDir'], runsDir);
    // This shell and code-server's extension host can find different python3s (a pyenv one here, /usr/bin's there): a
    // re-run from VS Code of a run submitted here would rightly be refused on environment.python. One python3 for both.
    const setup = (cfg.getIn(['hosts', 'local', 'setup']) as { toJSON(): string[] }).toJSON();
    cfg.setIn(['hosts', 'local', 'setup'], ['export PATH=/usr/bin:"$PATH"', ...setup]);
    writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
    const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
    spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
    spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], '2');
    writeFileSync(join(demo, 'configs/local-demo.yaml'), spec.toString());
    const { id } = JSON.parse(cli(['submit', 'configs/local-demo.yaml', '--json'], demo, cs.home)) as { id: string };
    cli(['logs', id, '--follow'], demo, cs.home);
    const reward = readFileSync(join(demo, REWARD), 'utf8');
    writeFileSync(join(demo, REWARD), reward.replace('    if not pred_n:\n', '    if not pred_n or pred_n == "none":\n'));

    const page = await cs.open(demo);
    await trustWorkspace(page);
    await openMedrlContainer(page);
    await focusPane(page, 'Runs');
    const rows = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'succeeded' });
    await rows.first().waitFor({ timeout: 30_000 });

    await runContextMenuItem(page, rows.first(), 'Re-run Exactly');
    const refused = page.locator('.notifications-toasts .notification-toast', {
      hasText: `${id} was not re-run: 1 thing on local differs from its provenance.json`,
    });
    await refused.waitFor({ timeout: 90_000 });
    assert.equal(readdirSync(runsDir).length, 1, 'a refused re-run writes no run folder');
    await refused.getByRole('button', { name: 'Show Differences' }).click();
    const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: 'reward.files.multiple_choice_exact.py' }).first();
    await editor.waitFor({ timeout: 20_000 });
    // The editor draws spaces as non-breaking ones.
    const text = (await editor.innerText()).replace(/\u00a0/g, ' ');
    assert.match(text, /^reward\.files\.multiple_choice_exact\.py: [0-9a-f]{64} → [0-9a-f]{64}$/m);
    assert.match(text, /^\+ {4}if not pred_n or pred_n == "none":$/m);

    writeFileSync(join(demo, REWARD), reward);
    await runContextMenuItem(page, rows.first(), 'Re-run Exactly');
    await page
      .locator('.notifications-toasts .notification-toast', {
        hasText: new RegExp(`re-ran ${id} exactly as demo-pubmedqa-grpo-\\S+ on local`),
      })
      .waitFor({ timeout: 90_000 });
    assert.equal(readdirSync(runsDir).length, 2);
    await page.close();
  });
});
