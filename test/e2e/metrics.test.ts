import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { FrameLocator, Page } from 'playwright-core';
import {
  ROOT,
  answerSaveDialog,
  openMedrlContainer,
  runCommand,
  runContextMenuItem,
  screenshot,
  codeServerForSuite,
} from './harness/code-server';

/** Training steps of the watched run. */
const STEPS = 12;

/**
 * The demo workspace (`medrl demo`) with its runs folder inside it, so the explorer shows the run folders. Its local host
 * runs the stand-in verl trainer through the runs feature's launcher.
 */
function demoWorkspace(): string {
  const demo = join(mkdtempSync(join(tmpdir(), 'medrl-metrics-e2e-')), 'demo');
  execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(demo, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  return demo;
}

/** Submits the demo GRPO spec under another name with the stand-in's pace knobs (`medrl submit`, the runs launcher). */
function submit(demo: string, name: string, steps: number, stepSeconds: number): { id: string; dir: string } {
  const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  spec.set('name', name);
  spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], String(steps));
  spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], String(stepSeconds));
  writeFileSync(join(demo, `configs/${name}.yaml`), spec.toString());
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'submit', `configs/${name}.yaml`, '--json'], {
    cwd: demo,
    encoding: 'utf8',
  });
  const record = JSON.parse(out) as { id: string; dir: string };
  return { id: record.id, dir: record.dir };
}

/** The verl step lines in a run's output.log: training steps (with the reward) and steps with validation values. */
function logSteps(dir: string): { train: Map<number, string>; validation: number } {
  const train = new Map<number, string>();
  let validation = 0;
  for (const line of readFileSync(join(dir, 'output.log'), 'utf8').split('\n')) {
    const step = /(?:^|\) )step:(\d+) - /.exec(line);
    if (!step) continue;
    const reward = /critic\/score\/mean:([^ ]+)/.exec(line);
    if (reward) train.set(Number(step[1]), reward[1]!);
    if (line.includes('val-core/')) validation++;
  }
  return { train, validation };
}

async function until<T>(what: () => string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

async function points(frame: FrameLocator, chart: string): Promise<number> {
  return Number(await frame.locator(`section.chart[data-chart="${chart}"]`).getAttribute('data-points'));
}

async function waitForPoints(frame: FrameLocator, chart: string, n: number, timeoutMs = 30_000): Promise<void> {
  let last = -1;
  await until(
    () => `chart ${chart} to show ${n} points (last seen ${last})`,
    async () => {
      last = await points(frame, chart).catch(() => -1);
      return last === n ? true : undefined;
    },
    timeoutMs,
  );
}

describe('metrics: the run dashboard in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite({ 'files.simpleDialog.enable': true });

  it('charts a run of the stand-in verl trainer as its steps arrive, overlays a second run and exports the visible data as CSV', async () => {
    const demo = demoWorkspace();
    const page = await cs.open(demo);
    // An error thrown in the dashboard page (uPlot drawing a one-step run once threw on every redraw) fails the test.
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // The extension's commands are in the palette once its container is (activation on medrl.yaml).
    await openMedrlContainer(page);
    // A quick run to compare with, and one slow enough to watch: 12 steps, 3 s each, through the runs launcher on `local`.
    const b = submit(demo, 'grpo-b', 4, 0.2);
    const a = submit(demo, 'grpo-a', STEPS, 3);
    await runCommand(page, 'MedRL: Open Run Dashboard');
    // From the palette it lists the runs of medrl.yaml's hosts: the slow one, running.
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'grpo-a' }).filter({ hasText: 'running' }).first().click();
    const frame = webview(page);
    await frame.locator('section.chart[data-chart="reward"]').waitFor({ timeout: 60_000 });
    // While the trainer runs, the reward chart gains points as steps are logged, without reopening anything.
    const seen: number[] = [];
    const liveAt: number[] = [];
    await until(
      () => `the reward chart to reach ${STEPS} points (seen ${seen.join(' → ')})`,
      async () => {
        const n = await points(frame, 'reward').catch(() => -1);
        if (n < 0 || n === seen.at(-1)) return undefined;
        seen.push(n);
        if (n < STEPS && (await frame.locator('.run[data-run-id="r0"]').getAttribute('data-state')) === 'live') liveAt.push(n);
        if (n > 0 && n < STEPS && liveAt.length === 1) await screenshot(page, 'metrics-dashboard-live');
        return n === STEPS ? true : undefined;
      },
      180_000,
    );
    assert.ok(
      seen.length >= 3 && liveAt.some((n) => n > 0),
      `the chart grew step by step while the run was live: ${seen.join(' → ')} (live at ${liveAt.join(', ')})`,
    );
    for (let k = 1; k < seen.length; k++) assert.ok(seen[k]! > seen[k - 1]!, `points only grow: ${seen.join(' → ')}`);
    // The run ends (the job writes exit_code): the dashboard says so and stops polling.
    await frame.locator('.run[data-run-id="r0"][data-state="ended"]').waitFor({ timeout: 60_000 });
    // The right number of points: one per step line the trainer logged (validation: step 0 and every test_freq).
    const log = logSteps(a.dir);
    assert.deepEqual(
      [...log.train.keys()],
      Array.from({ length: STEPS }, (_, i) => i + 1),
    );
    for (const chart of ['reward', 'kl', 'entropy', 'response_length', 'throughput'])
      assert.equal(await points(frame, chart), STEPS, chart);
    assert.equal(await points(frame, 'validation'), log.validation);
    assert.equal(await frame.locator('.run[data-run-id="r0"]').getAttribute('data-steps'), String(STEPS + 1));
    const colourA = await frame.locator('.run[data-run-id="r0"]').getAttribute('data-colour');
    await screenshot(page, 'metrics-dashboard');

    // A metric that is not a headline, by search.
    await frame.locator('#search input').fill('pg_loss');
    await frame.locator('.metric-pick', { hasText: 'actor/pg_loss' }).click();
    await waitForPoints(frame, 'm:actor/pg_loss', STEPS);

    // Export CSV through the save dialog: the visible charts' points, one row per run, metric and step.
    const csvFile = join(demo, 'exported.csv');
    await frame.locator('#export-csv').click();
    // VS Code's save dialog (a quick input, its button labelled Export CSV).
    await answerSaveDialog(page, csvFile, '-metrics.csv');
    const deadline = Date.now() + 15_000;
    while (!existsSync(csvFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const csv = readFileSync(csvFile, 'utf8').trim().split(/\r\n/);
    assert.equal(csv[0], 'run,metric,step,elapsed_s,value,smoothed');
    // Opened from the runs listed in the pick, the run is labelled by its name.
    const reward = csv.filter((l) => l.startsWith('grpo-a,critic/score/mean,'));
    assert.equal(reward.length, STEPS);
    // Each exported value is the one the trainer logged at that step.
    for (const row of reward) {
      const [, , step, , value] = row.split(',');
      assert.equal(Number(value), Number(log.train.get(Number(step))), row);
    }
    assert.ok(
      csv.some((l) => l.startsWith(`grpo-a,actor/pg_loss,${STEPS},`)),
      'the searched chart is exported too',
    );
    await page.keyboard.press('Escape');

    // Wall time on the x axis: verl's cumulative timing_s/step gives every step a time, so no point is dropped.
    await frame.locator('#x-time').click();
    await frame.locator('main.charts[data-x="time"]').waitFor({ timeout: 10_000 });
    assert.equal(await points(frame, 'reward'), STEPS);
    await screenshot(page, 'metrics-wall-time');

    // Compare: two run folders selected in the explorer, overlaid in one dashboard, each with its own points.
    const explorer = page.locator('.explorer-folders-view');
    await runCommand(page, 'View: Show Explorer');
    const row = (name: string) =>
      explorer.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${name}$`) }) }).first();
    await row('runs').waitFor();
    for (let i = 0; i < 5 && !(await row(b.id).isVisible()); i++) {
      await row('runs').click();
      await page.waitForTimeout(700);
    }
    // The quick run has long finished (exit_code written).
    await until(
      () => `${b.id} to finish`,
      async () => (existsSync(join(b.dir, 'exit_code')) ? true : undefined),
      60_000,
    );
    assert.equal(logSteps(b.dir).train.size, 4);
    await row(a.id).click();
    await row(b.id).click({ modifiers: ['Control'] });
    await runContextMenuItem(page, row(b.id), 'Compare Runs');
    const compare = page.frameLocator('iframe.webview.ready >> nth=-1').frameLocator('#active-frame');
    await compare.locator('.run[data-run-id="r1"]').waitFor({ timeout: 30_000 });
    await waitForPoints(compare, 'reward', STEPS + 4);
    assert.equal(await compare.locator('section.chart[data-chart="reward"]').getAttribute('data-run-points'), `${a.id}=${STEPS} ${b.id}=4`);
    // Each run has its own colour, and the first keeps the one it had alone (a run's colour is the same in every view).
    const colours = await compare.locator('.run').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.colour));
    assert.equal(colours[0], colourA);
    assert.notEqual(colours[1], colours[0]);
    await screenshot(page, 'metrics-compare');
    assert.deepEqual(pageErrors, [], 'no error thrown in the page');
    await page.close();
  });
});
