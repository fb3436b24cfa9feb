import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { resumeSpecText } from '../../src/core/checkpoints/resume-spec';
import type { Checkpoint } from '../../src/core/checkpoints/checkpoint';
import {
  ROOT,
  codeServerForSuite,
  focusPane,
  openMedrlContainer,
  pane,
  runContextMenuItem,
  screenshot,
  trustWorkspace,
} from './harness/code-server';

const REWARD = 'configs/rewards/multiple_choice_exact.py';

function cli(args: string[], cwd: string): string {
  return execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8' });
}

/** The demo workspace with its runs in a temporary folder (as test/cli/provenance-cli.test.ts makes it). */
function demoWorkspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'medrl-e2e-provenance-'));
  const demo = join(root, 'demo');
  cli(['demo', demo], root);
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(root, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  return demo;
}

function changeRewardLine(demo: string): void {
  const reward = readFileSync(join(demo, REWARD), 'utf8');
  writeFileSync(join(demo, REWARD), reward.replace('    if not pred_n:\n', '    if not pred_n or pred_n == "none":\n'));
}

/** Opens the demo workspace, trusts it and shows the Runs view; its rows of ended runs, newest first. */
async function openRuns(cs: ReturnType<typeof codeServerForSuite>, demo: string) {
  const page = await cs.open(demo);
  await trustWorkspace(page);
  await openMedrlContainer(page);
  await focusPane(page, 'Runs');
  return { page, rows: pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'succeeded' }) };
}

/** local-demo.yaml with a train batch size, submitted with `medrl submit` and followed to its end (2 quick stand-in steps). */
function submitWithBatch(demo: string, name: string, batch: number, more: Record<string, number> = {}): string {
  const doc = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  doc.setIn(['overrides', 'data.train_batch_size'], batch);
  for (const [k, v] of Object.entries(more)) doc.setIn(['overrides', k], v);
  doc.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  doc.setIn(['env', 'MEDRL_STANDIN_STEPS'], '2');
  writeFileSync(join(demo, `configs/${name}.yaml`), doc.toString());
  const { id } = JSON.parse(cli(['submit', `configs/${name}.yaml`, '--json'], demo)) as { id: string };
  cli(['logs', id, '--follow'], demo);
  return id;
}

describe('provenance: what changed between two compared runs, in real VS Code (code-server + Chromium)', () => {
  // The demo's own settings: workspace trust on, a fresh profile.
  const cs = codeServerForSuite(JSON.parse(readFileSync(join(ROOT, 'scripts/demo-settings.json'), 'utf8')) as Record<string, unknown>);

  it('two runs differing in one override and one reward line: the dashboard strip shows exactly those two', async () => {
    const demo = demoWorkspace();
    const a = submitWithBatch(demo, 'a', 8);
    changeRewardLine(demo);
    const b = submitWithBatch(demo, 'b', 16);

    // Both runs, newest first, share the spec's name: select both and compare them from the context menu.
    const { page, rows } = await openRuns(cs, demo);
    await rows.nth(1).waitFor({ timeout: 30_000 });
    await rows.nth(0).click();
    await rows.nth(1).click({ modifiers: ['Control'] });
    await runContextMenuItem(page, rows.nth(1), 'Compare Runs');

    const frame = page.frameLocator('iframe.webview.ready >> nth=-1').frameLocator('#active-frame');
    const strip = frame.locator('#what-changed .change-row');
    await strip.waitFor({ timeout: 30_000 });
    // The earlier run is the baseline, whichever was selected first.
    assert.equal((await strip.locator('.versus').innerText()).trim(), `${b} vs ${a}:`);
    const changes = strip.locator('.change');
    assert.deepEqual(await changes.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.path)), [
      'overrides.data.train_batch_size',
      'reward.files.multiple_choice_exact.py',
    ]);
    assert.equal(await changes.nth(0).innerText(), 'overrides.data.train_batch_size 8 \u2192 16');
    assert.equal(await changes.nth(1).locator('summary').innerText(), 'reward.files.multiple_choice_exact.py changed (+1 \u22121)');
    assert.equal(await frame.locator('#what-changed .change-note').count(), 0, 'both runs have a manifest');

    // The reward diff opens below, as text.
    await changes.nth(1).locator('summary').click();
    const diff = changes.nth(1).locator('pre.diff');
    await diff.waitFor();
    const text = await diff.innerText();
    assert.match(text, /^- {4}if not pred_n:$/m);
    assert.match(text, /^\+ {4}if not pred_n or pred_n == "none":$/m);
    copyFileSync(await screenshot(page, 'provenance'), join(ROOT, 'docs/images/provenance.png'));

    // The Runs view: a run's tooltip sums up its provenance (markdown: its spaces are non-breaking, hence \s); Show Run
    // Details opens it whole, read-only.
    await rows.nth(1).hover();
    await page
      .locator('.monaco-hover, .workbench-hover', { hasText: /data\.train:\s+sha256\s+[0-9a-f]{12},\s+rows\s+(\d+|\?)/ })
      .first()
      .waitFor({ timeout: 20_000 });
    await runContextMenuItem(page, rows.nth(1), 'Show Run Details');
    const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: 'spec: spec.yaml sha256' }).first();
    await editor.waitFor({ timeout: 20_000 });
    // The editor draws spaces as non-breaking ones.
    assert.match((await editor.innerText()).replace(/\u00a0/g, ' '), new RegExp(`^run (${a}|${b}) \\(demo-pubmedqa-grpo\\) on local`, 'm'));
    await page.close();
  });

  it('a run resumed with a changed reward: a marker on the step axis at the step it resumed from', async () => {
    const demo = demoWorkspace();
    const a = submitWithBatch(demo, 'a', 8, { 'trainer.save_freq': 1 });
    // What "Resume from Checkpoint" writes for the first run's step 1, submitted after one line of the reward changed.
    const runDir = (JSON.parse(cli(['runs', 'show', a, '--json'], demo)) as { record: { dir: string } }).record.dir;
    const ck = { host: 'local', path: join(runDir, 'checkpoints/global_step_1'), framework: 'verl', step: 1 } as Checkpoint;
    const resumed = resumeSpecText(readFileSync(join(runDir, 'spec.yaml'), 'utf8'), ck);
    writeFileSync(join(demo, `configs/${resumed.stem}.yaml`), resumed.text);
    changeRewardLine(demo);
    const { id: b } = JSON.parse(cli(['submit', `configs/${resumed.stem}.yaml`, '--json'], demo)) as { id: string };
    cli(['logs', b, '--follow'], demo);
    const title = `step 1: reward file multiple_choice_exact.py changed (${b} resumed from ${a})`;

    const { page, rows } = await openRuns(cs, demo);
    await rows.nth(1).waitFor({ timeout: 30_000 });
    const row = rows.filter({ hasText: resumed.name });
    await runContextMenuItem(page, row, 'Open Run Dashboard');
    const frame = page.frameLocator('iframe.webview.ready >> nth=-1').frameLocator('#active-frame');
    const marker = frame.locator('section.chart:not([hidden]) .change-marker');
    await marker.first().waitFor({ timeout: 30_000 });
    // One marker on each chart shown, at step 1, saying what changed there (the charts are asked again one at a time,
    // so the last ones get theirs a moment after the first).
    const shown = frame.locator('section.chart:not([hidden])');
    const deadline = Date.now() + 10_000;
    while ((await marker.count()) !== (await shown.count()) && Date.now() < deadline) await page.waitForTimeout(100);
    assert.ok((await shown.count()) > 0);
    assert.equal(await marker.count(), await shown.count(), 'a marker on every chart shown');
    assert.deepEqual([...new Set(await marker.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.step)))], ['1']);
    assert.equal(await marker.first().getAttribute('title'), title);
    await marker.first().hover();
    copyFileSync(await screenshot(page, 'provenance-markers'), join(ROOT, 'docs/images/provenance-markers.png'));

    await page.close();
  });
});
