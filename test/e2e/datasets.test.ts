import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, focusPane, openMedrlContainer, pane, openFile, runCommand, screenshot, codeServerForSuite } from './harness/code-server';

/** The page inside the active webview (VS Code nests it in two iframes). */
function webview(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
}

describe('datasets: see and check training data in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  it('the demo training file shows its kind, rows and breakdown in the tree, and its rows in the preview', async () => {
    const demo = join(mkdtempSync(join(tmpdir(), 'medrl-ds-demo-')), 'demo');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
    const page = await cs.open(demo);
    await openMedrlContainer(page);
    const datasets = pane(page, 'Datasets');
    // Room for the Datasets tree: the other views collapse (their headers toggle them).
    await pane(page, 'Hosts').locator('.monaco-list-row', { hasText: 'local' }).waitFor({ timeout: 20_000 });
    await focusPane(page, 'Datasets');
    await datasets.locator('.monaco-list-row[aria-level="2"]', { hasText: 'medec' }).waitFor();
    await datasets.locator('.monaco-list-row[aria-level="2"]', { hasText: 'pubmedqa' }).click();
    await datasets.locator('.monaco-list-row[aria-level="3"]', { hasText: 'verl' }).click();
    const train = datasets.locator('.monaco-list-row[aria-level="4"]', { hasText: 'train.parquet' });
    await train.locator('.label-description', { hasText: 'verl RL rows · 180 rows' }).waitFor({ timeout: 30_000 });
    // The file's children: the data_source and ability breakdown.
    await train.locator('.monaco-tl-twistie').click();
    await datasets.locator('.monaco-list-row', { hasText: 'data_source: pubmedqa 180' }).waitFor();
    await datasets.locator('.monaco-list-row', { hasText: 'ability: medical 180' }).waitFor();

    await train.click();
    const view = webview(page);
    await view.locator('.meta', { hasText: 'parquet' }).waitFor({ timeout: 30_000 });
    await view.locator('.table-header .cell', { hasText: 'reward_model' }).waitFor();
    const row0 = view.locator('.dataset-row[data-index="0"]');
    // A row is drawn with "…" until its cells arrive: wait for its content, not only for the row.
    await row0.filter({ hasText: 'pubmedqa' }).waitFor({ timeout: 30_000 });
    assert.match(await row0.innerText(), /pubmedqa/);
    assert.match(await row0.innerText(), /user: Read the abstract and answer the research question/);
    await view.locator('.status', { hasText: '180 of 180 rows fine, 0 problem(s)' }).waitFor({ timeout: 30_000 });
    // Only the rows in view are in the DOM.
    const rendered = await view.locator('.dataset-row').count();
    assert.ok(rendered > 3 && rendered < 60, `${rendered} rows rendered`);

    // Go to a row: its whole content appears in the detail pane, nested fields expandable.
    await view.locator('vscode-textfield.goto input').fill('150');
    await view.locator('vscode-button', { hasText: 'Go to row' }).click();
    await view.locator('.detail h2', { hasText: 'Row 150' }).waitFor();
    await view.locator('.detail .key', { hasText: 'ground_truth' }).waitFor();
    await view.locator('.dataset-row.selected[data-index="149"]').waitFor();

    // Search streams matching rows.
    await view.locator('vscode-textfield.search input').fill('mitochondria');
    await view.locator('vscode-button', { hasText: 'Search' }).click();
    await view.locator('.lower h2', { hasText: /Search: [1-9]\d* matching row\(s\)$/ }).waitFor({ timeout: 30_000 });
    assert.match(await view.locator('.matches li').first().innerText(), /mitochondria/i);
    await screenshot(page, 'datasets-preview');
    await page.close();
  });

  it('a bad dataset shows its problems in the tree, the preview and the Problems panel at their lines', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'medrl-ds-bad-'));
    writeFileSync(join(folder, 'medrl.yaml'), 'version: 1\nhosts:\n  local: {}\ndatasets:\n  - path: data\n');
    mkdirSync(join(folder, 'data'));
    const row = (q: string, gt: string) =>
      JSON.stringify({
        data_source: 'pubmedqa',
        prompt: [{ role: 'user', content: q }],
        ability: 'medical',
        reward_model: { style: 'rule', ground_truth: gt },
      });
    writeFileSync(
      join(folder, 'data', 'bad.jsonl'),
      [
        row('Is aspirin useful?', 'yes'),
        '{"data_source": "pubmedqa", "prompt": [',
        row('Does it work?', ''),
        JSON.stringify({ data_source: 'pubmedqa', prompt: 'not a list', reward_model: { ground_truth: 'no' } }),
      ].join('\n') + '\n',
    );
    const page = await cs.open(folder);
    await openMedrlContainer(page);
    await focusPane(page, 'Datasets');
    const datasets = pane(page, 'Datasets');
    const file = datasets.locator('.monaco-list-row', { hasText: 'bad.jsonl' });
    await file.locator('.label-description', { hasText: '3 problem(s)' }).waitFor({ timeout: 30_000 });
    await file.locator('.monaco-tl-twistie').click();
    await datasets.locator('.monaco-list-row', { hasText: '3 problem(s)' }).filter({ hasText: '1 of 4 rows fine' }).click();
    await datasets.locator('.monaco-list-row', { hasText: 'row 3 reward_model.ground_truth' }).waitFor();

    await runCommand(page, 'View: Focus Problems');
    const problem = page.locator('.markers-panel .monaco-list-row', { hasText: 'row 2: line 2 (byte offset' });
    await problem.waitFor({ timeout: 20_000 });
    assert.match(await problem.innerText(), /\[Ln 2, Col 1\]/);
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'row 4, prompt:' }).waitFor();

    await file.click();
    const view = webview(page);
    await view.locator('.dataset-row.error[data-index="1"]', { hasText: 'malformed JSON' }).waitFor({ timeout: 30_000 });
    await view.locator('.lower h2', { hasText: 'Problems: 3' }).waitFor({ timeout: 30_000 });
    await view.locator('.problem', { hasText: 'empty ground truth' }).click();
    await view.locator('.detail h2', { hasText: 'Row 3' }).waitFor();
    await screenshot(page, 'datasets-problems');
    await page.close();
  });

  it('converts the raw PubMedQA sample in the form: preview the first rows, then write a seeded split', async () => {
    const demo = join(mkdtempSync(join(tmpdir(), 'medrl-ds-convert-')), 'demo');
    execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'demo', demo], { encoding: 'utf8' });
    const page = await cs.open(demo);
    await openFile(page, 'ori_pqal-first200.json');
    await runCommand(page, 'MedRL: Convert Dataset to verl/TRL');
    const view = webview(page);
    await view.locator('h1', { hasText: 'Convert' }).waitFor({ timeout: 30_000 });
    await view.locator('vscode-button', { hasText: 'Preview' }).click();
    const first = view.locator('pre.converted').first();
    await first.waitFor({ timeout: 20_000 });
    const text = await first.innerText();
    assert.match(text, /"ground_truth": "yes"/);
    assert.match(text, /Do mitochondria play a role in remodelling lace plant leaves/);
    assert.match(text, /"id": "21645374"/);
    await view.locator('vscode-button', { hasText: 'Convert and write' }).click();
    await view.locator('.message.ok', { hasText: 'Wrote 180 train and 20 test row(s)' }).waitFor({ timeout: 30_000 });
    const out = join(demo, 'data/pubmedqa/ori_pqal-first200-verl');
    assert.ok(existsSync(join(out, 'train.parquet')) && existsSync(join(out, 'test.parquet')));
    assert.equal(readFileSync(join(out, 'test.parquet')).subarray(0, 4).toString(), 'PAR1');
    await screenshot(page, 'datasets-convert');
    await page.close();
  });
});
