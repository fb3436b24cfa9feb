import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeServer, ROOT, openFile, runCommand, screenshot } from './harness/code-server';
import type { Frame, Page } from 'playwright-core';
import { playgroundFrame } from './harness/playground-frame';
import { startStandinServer, type StandinServer } from '../integration/fixtures/openai-standin';
import { startSshd, type SshdFixture } from '../integration/fixtures/sshd';

/** "Load samples…" and the file picked in the quick pick, as a user does; waits until the table has them. */
async function loadSamples(page: Page, frame: Frame, file: string, count: number): Promise<void> {
  await frame.locator('#load-samples').click();
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().click();
  await frame.locator('#status', { hasText: `${count} samples from ${file}` }).waitFor({ timeout: 20_000 });
}

describe('reward playground in real VS Code (code-server + Chromium)', () => {
  const cs = new CodeServer();
  let judge: StandinServer;
  let sshd: SshdFixture;
  const ws = mkdtempSync(join(tmpdir(), 'medrl-playground-ws-'));
  before(async () => {
    judge = await startStandinServer(['--served-model-name', 'Judger', '--latency-ms', '50']);
    // code-server runs with HOME = its temp home: the fixture writes the `gpubox` alias and known_hosts there.
    sshd = await startSshd({ home: cs.home, alias: 'gpubox' });
    writeFileSync(
      join(ws, 'medrl.yaml'),
      `version: 1\nhosts:\n  gpubox: {}\njudges:\n  judge:\n    url: ${judge.url}\n    model: Judger\n    seed: 42\n    prompt: "Reference: {ground_truth}\\nResponse: {solution_str}\\nReply in JSON."\n    parse: json:score\n`,
    );
    copyFileSync(join(ROOT, 'configs/rewards/multiple_choice_exact.py'), join(ws, 'exact_match.py'));
    writeFileSync(
      join(ws, 'where.py'),
      'import os\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {"score": 1.0, "file": __file__, "home": os.environ["HOME"]}\n',
    );
    writeFileSync(
      join(ws, 'samples.jsonl'),
      [
        { data_source: 'pubmedqa', solution_str: 'The trial shows benefit.\n<answer>yes</answer>', ground_truth: 'yes' },
        { data_source: 'pubmedqa', solution_str: 'Evidence is weak.\n<answer>maybe</answer>', ground_truth: 'no' },
        { data_source: 'pubmedqa', solution_str: 'Answer: no', ground_truth: 'no' },
        { data_source: 'pubmedqa', solution_str: '<answer>yes</answer>', ground_truth: 'maybe' },
      ]
        .map((s) => JSON.stringify(s))
        .join('\n'),
    );
    await cs.start({ 'security.workspace.trust.enabled': false });
  });
  after(async () => {
    await cs.stop();
    await judge.stop();
    await sshd?.stop();
  });

  it('from the CodeLens of a reward function: load samples, run a batch against the function and the judge side by side, read the table', async () => {
    const page = await cs.open(ws);
    await openFile(page, 'exact_match.py');
    // compute_score is at the end of the file: bring it into view.
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    const lens = page.locator('.codelens-decoration a', { hasText: 'Test in playground (verl)' });
    await lens.waitFor({ timeout: 60_000 });
    await lens.click();
    const frame = await playgroundFrame(page);
    // Reward functions run on medrl.yaml's default host unless another one of the pool is picked.
    await frame.waitForFunction(
      () => (document.querySelector('#host') as (Element & { value?: string }) | null)?.value === 'local',
      undefined,
      { timeout: 20_000 },
    );

    await loadSamples(page, frame, 'samples.jsonl', 4);

    // Scorer B: the judge of medrl.yaml.
    await frame.locator('#scorer-b').click();
    await frame.locator('#scorer-b li[role="option"]', { hasText: 'judge judge (Judger)' }).click();
    await frame.locator('.judge-params', { hasText: 'temperature 0, seed 42, score json:score' }).waitFor();

    await frame.locator('#run-all').click();
    await frame.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 60_000 });
    const rows = await frame
      .locator('#results tbody tr.sample')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td.score')].map((td) => td.textContent)));
    // The stand-in judge reads only the first line of a multi-line response, so it disagrees on sample 0.
    assert.deepEqual(rows, [
      ['1', '0'],
      ['0', '0'],
      ['1', '1'],
      ['0', '0'],
    ]);
    // The judge's answer is in the row's details, raw, once the row is open.
    await frame.locator('#results tr.sample[data-index="2"] td.index').click();
    const raw = await frame.locator('#detail-2 .side-b pre.answer').textContent();
    assert.match(raw ?? '', /"label": "correct"/, 'the judge answer is shown raw');
    await frame
      .locator('#summary', {
        hasText: "Agreement A vs B on 4 samples: Pearson r 0.577, Cohen's κ 0.500 (pass ≥ 0.5), same pass/fail 75.0%; differ on #0",
      })
      .waitFor();
    await screenshot(page, 'playground-batch');
    await page.close();
  });

  it('runs a reward function on an SSH host picked in the playground (the function is staged there)', async () => {
    const page = await cs.open(ws);
    await runCommand(page, 'MedRL: Open Reward Playground');
    const frame = await playgroundFrame(page);
    await loadSamples(page, frame, 'samples.jsonl', 4);
    await frame.locator('#scorer-a').click();
    await frame.locator('#scorer-a li[role="option"]', { hasText: 'where.py:compute_score' }).click();
    await frame.locator('#host').click();
    await frame.locator('#host li[role="option"]', { hasText: 'gpubox (ssh)' }).click();
    await frame.locator('#run-all').click();
    await frame.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 90_000 });
    const sampleRows = frame.locator('#results tbody tr.sample');
    for (let i = 0; i < 4; i++) await sampleRows.nth(i).locator('td.index').click();
    const details = await frame.locator('#results tr.detail pre.detail').allTextContents();
    assert.equal(details.length, 4);
    for (const d of details) {
      const detail = JSON.parse(d) as { file: string; home: string };
      assert.equal(detail.home, sshd.remoteHome, 'the worker ran on the SSH host (its HOME)');
      assert.ok(
        detail.file.startsWith(join(sshd.remoteHome, '.medrl/playground/functions/')) && detail.file.endsWith('/where.py'),
        detail.file,
      );
    }
    await frame.locator('#results thead th', { hasText: 'A score' }).first().waitFor();
    assert.match(await frame.locator('#summary').innerText(), /where\.py:compute_score on gpubox\): 4 run, mean 1\.000, 0 errors/);
    await screenshot(page, 'playground-ssh-host');
    await page.close();
  });

  it('a long answer is one line in its row and whole in the open row; the details JSON shows only when the row is open', async () => {
    const long = `${'The patient presented with fever, cough and a raised CRP; imaging was clear. '.repeat(30)}<answer>yes</answer> END`;
    writeFileSync(
      join(ws, 'long.jsonl'),
      `${JSON.stringify({ data_source: 'pubmedqa', solution_str: long, ground_truth: { answer: 'yes', aliases: ['y', 'yes.'] } })}\n`,
    );
    const page = await cs.open(ws);
    await runCommand(page, 'MedRL: Open Reward Playground');
    const frame = await playgroundFrame(page);
    await loadSamples(page, frame, 'long.jsonl', 1);
    await frame.locator('#scorer-a').click();
    await frame.locator('#scorer-a li[role="option"]', { hasText: 'where.py:compute_score' }).click();
    await frame.locator('#run-all').click();
    await frame.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 60_000 });

    const row = frame.locator('#results tr.sample').first();
    const lines = (selector: string) =>
      frame.locator(selector).evaluate((e) => ({
        height: e.clientHeight,
        lineHeight: parseFloat(getComputedStyle(e).lineHeight) || 1.4 * parseFloat(getComputedStyle(e).fontSize),
        clipped: e.scrollWidth > e.clientWidth,
        width: e.getBoundingClientRect().width,
      }));
    // Closed: the answer is one ellipsised line, and no JSON is on the page.
    const closed = await lines('#results tr.sample td.solution');
    assert.ok(closed.clipped && closed.height < 2 * closed.lineHeight + 8, `one clipped line: ${JSON.stringify(closed)}`);
    assert.equal(await row.getAttribute('aria-expanded'), 'false');
    assert.equal(await frame.locator('#results pre.detail').count(), 0, 'no details JSON while the row is closed');

    // Enter on the focused row opens it: the answer in full, wrapped, as wide as the table; the details as JSON.
    await row.press('Enter');
    await frame.locator('#detail-0 pre.solution-full').waitFor();
    assert.equal(await frame.locator('#results tr.sample').first().getAttribute('aria-expanded'), 'true');
    assert.equal(await frame.locator('#detail-0 pre.solution-full').textContent(), long);
    const open = await lines('#detail-0 pre.solution-full');
    const tableWidth = (await frame.locator('#results').boundingBox())!.width;
    assert.ok(open.height > 4 * open.lineHeight && !open.clipped, `wrapped over many lines: ${JSON.stringify(open)}`);
    assert.ok(open.width > 0.8 * tableWidth, `full width: ${open.width} of ${tableWidth}`);
    assert.ok(await frame.locator('#detail-0 pre.detail').isVisible());
    const detail = JSON.parse((await frame.locator('#detail-0 pre.detail').textContent()) ?? '') as { home?: string };
    assert.ok(detail.home, 'the reward function detail is the JSON it returned');
    assert.match((await frame.locator('#detail-0 pre.json').first().textContent()) ?? '', /"aliases": \[\n/);
    await screenshot(page, 'playground-expanded');

    // Space closes it again.
    await frame.locator('#results tr.sample').first().press(' ');
    await frame.locator('#detail-0').waitFor({ state: 'detached' });
    assert.equal(await frame.locator('#results tr.sample').first().getAttribute('aria-expanded'), 'false');
    await page.close();
  });
});
