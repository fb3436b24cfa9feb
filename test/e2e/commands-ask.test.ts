import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, codeServerForSuite, openMedrlContainer, pickQuickItem, runCommand, screenshot } from './harness/code-server';

const cli = (args: string[], cwd: string) =>
  execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8' });

/** The demo workspace with two finished runs of the stand-in verl trainer on `local`: `older-run`, then the demo's own. */
async function demoWithRuns(): Promise<{ demo: string; newest: { id: string; dir: string } }> {
  const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-ask-'));
  const demo = join(home, 'demo');
  cli(['demo', demo], home);
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(home, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], '3');
  writeFileSync(join(demo, 'configs/local-demo.yaml'), spec.toString());
  spec.set('name', 'older-run');
  writeFileSync(join(demo, 'configs/older-run.yaml'), spec.toString());
  const submit = async (file: string) => {
    const run = JSON.parse(cli(['submit', `configs/${file}`, '--json'], demo)) as { id: string; dir: string };
    for (let i = 0; !existsSync(join(run.dir, 'exit_code')); i++) {
      if (i > 600) throw new Error(`the run did not end: ${readFileSync(join(run.dir, 'output.log'), 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return run;
  };
  await submit('older-run.yaml');
  // Submitted a moment later, so it is the newer of the two.
  await new Promise((r) => setTimeout(r, 1100));
  return { demo, newest: await submit('local-demo.yaml') };
}

/** The rows of the quick pick on screen, once it lists the run named `name`. */
async function pickRows(page: Page, name: string): Promise<string[]> {
  const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  await rows.filter({ hasText: name }).first().waitFor({ timeout: 30_000 });
  return rows.allInnerTexts();
}

/** The newest webview's page (code-server puts each in an iframe with the page in an inner #active-frame). */
function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready >> nth=-1').frameLocator('#active-frame');
}

describe('commands that ask: run from the palette with nothing selected, they offer the runs to pick', () => {
  const cs = codeServerForSuite();

  it('Open Run Dashboard, Open Episode Replay and Copy Run ID list the runs newest first with state and host, and act on the one picked', async () => {
    const { demo, newest } = await demoWithRuns();
    const page = await cs.open(demo);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${cs.port}` });
    await openMedrlContainer(page);

    await runCommand(page, 'MedRL: Open Run Dashboard');
    const rows = await pickRows(page, 'older-run');
    await screenshot(page, 'commands-ask-run-pick');
    const runRows = rows.filter((r) => r.includes('succeeded · local'));
    assert.equal(runRows.length, 2, `both runs, each with its state and host: ${rows.join(' | ')}`);
    assert.match(runRows[0]!, /demo-pubmedqa-grpo/, `the newest run first: ${rows.join(' | ')}`);
    assert.match(runRows[1]!, /older-run/);
    assert.match(rows.at(-1)!, /Browse for a run folder/, 'the last item browses for a folder');
    await pickQuickItem(page, 'demo-pubmedqa-grpo');
    await page.locator('.tab', { hasText: 'Metrics: demo-pubmedqa-grpo' }).waitFor({ timeout: 30_000 });
    // The run's chip shows at once; its steps count once the metrics are read.
    const chip = webview(page).locator('.run[data-run-id="r0"]:not([data-steps="0"])');
    await chip.waitFor({ timeout: 30_000 });
    const steps = Number(await chip.getAttribute('data-steps'));
    assert.ok(steps > 0, `the dashboard charts the run's steps (${steps})`);
    await runCommand(page, 'View: Close All Editors');

    await runCommand(page, 'MedRL: Open Episode Replay');
    await pickRows(page, 'demo-pubmedqa-grpo');
    await pickQuickItem(page, 'demo-pubmedqa-grpo');
    await webview(page).locator('.vlist-row[data-index]').first().waitFor({ timeout: 30_000 });
    await screenshot(page, 'commands-ask-replay');
    await runCommand(page, 'View: Close All Editors');

    await runCommand(page, 'MedRL: Copy Run ID');
    await pickRows(page, 'older-run');
    await pickQuickItem(page, 'demo-pubmedqa-grpo');
    await page.locator('.statusbar', { hasText: `MedRL: copied ${newest.id}` }).waitFor({ timeout: 10_000 });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), newest.id);

    // Nothing fits: it says so, with the next step, instead of failing.
    await runCommand(page, 'MedRL: Cancel Run');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'No queued or running run to cancel' })
      .waitFor({ timeout: 30_000 });
    await page.close();
  });
});
