import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, codeServerForSuite, openMedrlContainer, runCommand, screenshot } from './harness/code-server';
import { writeDenseVerlSteps } from '../core/metrics/verl-log-generator';

/** Issue 19's comparison: ten runs of 100k steps, each step logging verl's 64 metrics. */
const RUNS = 10;
const STEPS = 100_000;
/** One step's reward blows up: the chart must show it at full zoom-out. */
const SPIKE = { step: 61_234, value: 50 };

function cli(args: string[], cwd: string): string {
  return execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8' });
}

/**
 * The demo workspace with ten ended runs of the stand-in verl trainer (submitted with `medrl submit`, so each is a run
 * the Runs view and the pickers list), each run's output.log then replaced by the same 100k-step dense log.
 */
async function tenLongRuns(): Promise<{ root: string; demo: string; logBytes: number }> {
  const root = mkdtempSync(join(tmpdir(), 'medrl-e2e-scale-'));
  const demo = join(root, 'demo');
  cli(['demo', demo], root);
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(root, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  const log = join(root, 'long-output.log');
  await writeDenseVerlSteps(log, STEPS, SPIKE);
  const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], '1');
  spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  const dirs: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    spec.set('name', `long-${i}`);
    writeFileSync(join(demo, `configs/long-${i}.yaml`), spec.toString());
    dirs.push((JSON.parse(cli(['submit', `configs/long-${i}.yaml`, '--json'], demo)) as { dir: string }).dir);
  }
  const deadline = Date.now() + 120_000;
  for (const dir of dirs) {
    while (!existsSync(join(dir, 'exit_code'))) {
      assert.ok(Date.now() < deadline, `the stand-in run in ${dir} did not end`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // The long log is what the dashboard reads (metrics.jsonl would be preferred: verl writes it only with the file logger).
    rmSync(join(dir, 'metrics.jsonl'), { force: true });
    rmSync(join(dir, 'output.log'));
    linkSync(log, join(dir, 'output.log'));
  }
  return { root, demo, logBytes: statSync(log).size };
}

function chart(frame: FrameLocator, id: string) {
  return frame.locator(`section.chart[data-chart="${id}"]`);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** How long each frame's drawing took in the page (the rest of a frame is the ask, the host's answer and its way back). */
const draws: number[] = [];

/** Does one zoom or pan gesture, waits for the chart's new range to be drawn, and returns the frame time the page measured. */
async function frameAfter(page: Page, reward: ReturnType<typeof chart>, gesture: () => Promise<void>): Promise<number> {
  const before = await reward.getAttribute('data-range');
  await gesture();
  return waitFor(
    'the zoomed range to be drawn',
    async () => {
      const range = await reward.getAttribute('data-range');
      const ms = await reward.getAttribute('data-frame-ms');
      if (range !== before && ms) draws.push(Number(await reward.getAttribute('data-draw-ms')));
      return range !== before && ms ? Number(ms) : undefined;
    },
    30_000,
  );
}

/**
 * Compares every long run from the palette (nothing selected) and waits until each run has a reward line, then until
 * all its steps are drawn: the times from Enter to each.
 */
async function compareAll(
  page: Page,
): Promise<{ reward: ReturnType<typeof chart>; firstMs: number; pageMs: number; openMs: number; loading: number[] }> {
  await runCommand(page, 'MedRL: Compare Runs');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'long-' }).first().waitFor({ timeout: 60_000 });
  // All of them (the list draws only the rows in view): the count beside the input says ten. A click that lands while the
  // picker is still settling can be lost (seen once in four runs: the checkbox showed its tooltip, "0 Selected"), so the
  // click is repeated while the count still says none.
  const all = page.locator('.quick-input-count', { hasText: `${RUNS} Selected` });
  for (let tries = 1; ; tries++) {
    if (await page.locator('.quick-input-count', { hasText: /^0 Selected$/ }).isVisible())
      await page.locator('.quick-input-header .monaco-checkbox').first().click();
    try {
      await all.waitFor({ timeout: 3_000 });
      break;
    } catch (err) {
      if (tries === 3) throw err;
    }
  }
  const opened = Date.now();
  await page.keyboard.press('Enter');
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  const reward = chart(frame, 'reward');
  // Meanwhile the runs' chips say how much of each log is read ("loading 37%"). On a fast machine a percent may show for
  // a frame or two only, which polling from here misses: the page notes every chip state it draws, from as soon as it is up.
  await waitFor(
    'the dashboard page',
    () =>
      frame.locator('body').evaluate((body) => {
        const w = window as unknown as { chipStates?: Set<string> };
        // Not the blank document the frame starts with (its window stays on for the dashboard's document).
        const bar = body.querySelector('.runs');
        if (!bar) return undefined;
        if (w.chipStates) return true;
        // No named functions in here: the test's transpiler would wrap them in a helper the page does not have.
        // Only the chips' bar is watched (each render replaces its chips), not the charts' busy drawing.
        const states = new Set<string>();
        bar.querySelectorAll<HTMLElement>('.run').forEach((e) => states.add(e.dataset.state ?? ''));
        new MutationObserver(() => bar.querySelectorAll<HTMLElement>('.run').forEach((e) => states.add(e.dataset.state ?? ''))).observe(
          bar,
          { childList: true },
        );
        w.chipStates = states;
        return true;
      }),
    60_000,
  );
  // A big log is read in slices, each drawn as it comes: first every run has a line, then all of its steps.
  await waitFor(
    'a reward line for every run',
    async () => ((await reward.getAttribute('data-run-points'))?.split(' ').length === RUNS ? true : undefined),
    300_000,
  );
  const firstMs = Date.now() - opened;
  // When the dashboard's document started loading (its clock's origin), from Enter: until then code-server is making
  // the webview, which nothing in the extension waits on.
  const pageMs = (await reward.evaluate(() => performance.timeOrigin)) - opened;
  // Loaded: every run's reward line drawn from all its steps (the page has each run's count of logged values: 100k).
  await waitFor(
    'all ten reward lines',
    async () => (Number(await reward.getAttribute('data-points')) === RUNS * STEPS ? true : undefined),
    300_000,
  );
  const openMs = Date.now() - opened;
  // The percents the chips showed.
  const states = await frame.locator('body').evaluate(() => [...(window as unknown as { chipStates: Set<string> }).chipStates]);
  const loading = [...new Set(states.filter((s) => /^loading \d+%$/.test(s)).map((s) => Number(/\d+/.exec(s)![0])))];
  return { reward, firstMs, pageMs, openMs, loading: loading.sort((a, b) => a - b) };
}

describe('metrics at scale: ten runs of 100k steps in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  let root = '';
  // The ten runs' 211 MB log.
  after(() => rmSync(root, { recursive: true, force: true }));

  it('compares ten 100k-step runs from the palette, shows a one-step spike at full zoom-out, and zooms and pans', async () => {
    const made = await tenLongRuns();
    root = made.root;
    const { demo, logBytes } = made;
    const page = await cs.open(demo);
    await openMedrlContainer(page);
    const { reward, firstMs, pageMs, openMs, loading } = await compareAll(page);
    const modes = (await reward.getAttribute('data-mode'))!.split(' ');
    assert.deepEqual(modes, Array(RUNS).fill('envelope'), 'zoomed out, each run is drawn as its per-pixel envelope');
    // The spike: one step of 100k, drawn as its column's max (a sampled chart would almost surely miss it).
    assert.equal(Number(await reward.getAttribute('data-max')), SPIKE.value);
    await screenshot(page, 'metrics-scale-ten-runs');

    // Zoom with the wheel about the pointer, pan with Shift+wheel, then drag a narrow span: full resolution.
    const over = reward.locator('.u-over');
    await over.hover();
    const zooms: number[] = [];
    for (let i = 0; i < 5; i++) zooms.push(await frameAfter(page, reward, () => page.mouse.wheel(0, -200)));
    const pans: number[] = [];
    await page.keyboard.down('Shift');
    for (let i = 0; i < 3; i++) pans.push(await frameAfter(page, reward, () => page.mouse.wheel(0, 200)));
    await page.keyboard.up('Shift');
    const box = (await over.boundingBox())!;
    const drag = await frameAfter(page, reward, async () => {
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2, { steps: 3 });
      await page.mouse.up();
    });
    assert.deepEqual(
      (await reward.getAttribute('data-mode'))!.split(' '),
      Array(RUNS).fill('points'),
      'a span of a few hundred steps shows every logged value',
    );
    // A double-click shows the whole runs again.
    const reset = await frameAfter(page, reward, () => over.dblclick());
    assert.equal(Number(await reward.getAttribute('data-max')), SPIKE.value);
    await screenshot(page, 'metrics-scale-zoomed');
    const frames = [...zooms, ...pans, drag, reset];

    // Opened again (closed, then compared from the palette as before): each log's parse comes from the metrics cache.
    await runCommand(page, 'View: Close All Editors');
    await page.locator('iframe.webview').waitFor({ state: 'detached', timeout: 30_000 });
    const again = await compareAll(page);
    assert.deepEqual((await again.reward.getAttribute('data-mode'))!.split(' '), Array(RUNS).fill('envelope'));
    assert.equal(Number(await again.reward.getAttribute('data-max')), SPIKE.value, 'the spike, read back from the cache');
    // Zooming in re-reads full resolution from the cache file's blocks.
    const overAgain = again.reward.locator('.u-over');
    await overAgain.hover();
    const againZooms: number[] = [];
    for (let i = 0; i < 3; i++) againZooms.push(await frameAfter(page, again.reward, () => page.mouse.wheel(0, -200)));
    frames.push(...againZooms);

    // A first open again, in a session that has shown a webview: the cache emptied (as if evicted), so each log is parsed
    // anew, but code-server's webview host is already up. The session's first webview (above) also waits on code-server
    // making it (up to 3.3 s on the 2-core machine, whatever the page), which nothing in the extension can shorten.
    await runCommand(page, 'View: Close All Editors');
    await page.locator('iframe.webview').waitFor({ state: 'detached', timeout: 30_000 });
    const cacheDir = join(cs.userDataDir, 'User/globalStorage/medrl.medrl-studio/metrics-cache');
    assert.ok(
      readdirSync(cacheDir).some((f) => f.endsWith('.bin')),
      `the ten parses were kept in ${cacheDir}`,
    );
    rmSync(cacheDir, { recursive: true, force: true });
    const fresh = await compareAll(page);
    assert.equal(Number(await fresh.reward.getAttribute('data-max')), SPIKE.value, 'the spike, parsed anew');
    assert.ok(
      readdirSync(cacheDir).some((f) => f.endsWith('.bin')),
      `parsed anew (not from the cache) and kept in ${cacheDir} again`,
    );
    // While the big logs are read, each run's chip says how far: the charts meanwhile show only their first steps. On the
    // first open the reads may all end before code-server has made the page (seconds); the page is up at once here.
    const percents = [...new Set([...loading, ...fresh.loading])].sort((a, b) => a - b);
    assert.ok(
      percents.some((p) => p > 0 && p < 100),
      `a run's chip showed how much of its log was read while loading (percents seen: ${percents.join(', ') || 'none'})`,
    );

    const worst = Math.max(...frames);
    const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `[e2e] metrics at scale: ${RUNS} runs × ${STEPS} steps × 64 metrics (${(logBytes / 1e6).toFixed(0)} MB of log each): ` +
        `first open: every run drawn in ${secs(firstMs)} (the page's document started loading after ${secs(pageMs)}), all steps in ${secs(openMs)}; ` +
        `opened again (metrics cache): every run drawn in ${secs(again.firstMs)} (page after ${secs(again.pageMs)}), all steps in ${secs(again.openMs)} (target < 2 s); ` +
        `first open after another webview (cache emptied): every run drawn in ${secs(fresh.firstMs)} (page after ${secs(fresh.pageMs)}), all steps in ${secs(fresh.openMs)} (target < 2 s); frame times (ask → drawn) zoom ${zooms.map((f) => f.toFixed(0)).join('/')} ms, ` +
        `zoom opened again ${againZooms.map((f) => f.toFixed(0)).join('/')} ms, ` +
        `pan ${pans.map((f) => f.toFixed(0)).join('/')} ms, drag to full resolution ${drag.toFixed(0)} ms, reset ${reset.toFixed(0)} ms; ` +
        `worst ${worst.toFixed(0)} ms (target < 100 ms), of which drawing took at most ${Math.max(...draws).toFixed(0)} ms`,
    );
    // The target is 100 ms; the bound here leaves room for a loaded CI machine, and the figure is printed above.
    assert.ok(worst < 1000, `a zoom or pan took ${worst} ms`);
    await page.close();
  });
});
