import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { ROOT, freePort, runContextMenuItem, screenshot, codeServerForSuite } from './harness/code-server';

/** The replay webview: code-server puts each webview in an iframe with the page in an inner #active-frame. */
function replayFrame(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

/** Right-clicks an item of the explorer and runs Open Episode Replay from its context menu, as a user does. */
async function openFromExplorer(page: Page, name: string): Promise<FrameLocator> {
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: 30_000 });
  // The explorer may still be settling right after the workbench loads: the helper opens the menu again if it closes.
  await runContextMenuItem(page, row, 'Open Episode Replay');
  const frame = replayFrame(page);
  await frame
    .locator('.vlist-row[data-index]')
    .first()
    .waitFor({ timeout: 30_000 })
    .catch(async (err: unknown) => {
      await screenshot(page, 'episodes-failed-to-open');
      throw err;
    });
  return frame;
}

const ep = (frame: FrameLocator) => frame.locator('.episode');

describe('episode replay in real VS Code (code-server + Chromium)', () => {
  const cs = codeServerForSuite();

  it("opens a run's dumps, filters by score, steps through an episode's turns and compares the prompt across steps", async () => {
    const ws = mkdtempSync(join(tmpdir(), 'medrl-episodes-'));
    cpSync(join(ROOT, 'test/fixtures/episodes/verl-run'), join(ws, 'verl-run'), { recursive: true });
    const page = await cs.open(ws);
    const frame = await openFromExplorer(page, 'verl-run');

    // The latest rollout step opens, with its first episode and the step's signals.
    await frame.locator('.chip.selected', { hasText: '3' }).waitFor();
    await frame.locator('.signal', { hasText: 'flat groups' }).waitFor();
    await ep(frame).locator('.ep-title', { hasText: 'rollouts · step 3 · #0' }).waitFor();
    await frame.locator('.count', { hasText: '20 of 20 episodes' }).waitFor({ timeout: 20_000 });
    await frame.locator('.timeline-chart .u-over').waitFor({ timeout: 20_000 });
    await screenshot(page, 'episodes-opened');

    // Filter by score: only score-1 episodes remain, each row says so.
    await frame.locator('#filter-min input').fill('1');
    await frame
      .locator('.count', { hasText: /^\d+ of 20 episodes/ })
      .filter({ hasNotText: '20 of 20' })
      .waitFor();
    const scores = await frame.locator('.vlist-row[data-index] .col-score').allInnerTexts();
    assert.ok(scores.length > 0 && scores.length < 20, `filtered rows: ${scores.join(',')}`);
    assert.ok(
      scores.every((s) => s === '1'),
      `every row scores 1: ${scores.join(',')}`,
    );
    await screenshot(page, 'episodes-filtered');
    await frame.locator('#filter-min input').fill('');
    await frame.locator('.count', { hasText: '20 of 20 episodes' }).waitFor();

    // Step 1, episode 3: the diagnostic agent that was cut off; a conversation with tool calls and results.
    await frame.locator('.chip', { hasText: /^1$/ }).click();
    await ep(frame).locator('.ep-title', { hasText: 'step 1 · #0' }).waitFor();
    await frame.locator('.vlist-row[data-index="3"]').click();
    await ep(frame).locator('.ep-title', { hasText: 'step 1 · #3' }).waitFor();
    assert.deepEqual(await ep(frame).locator('.turn-role').allInnerTexts(), [
      'SYSTEM',
      'USER',
      'ASSISTANT',
      'TOOL',
      'ASSISTANT',
      'TOOL',
      'ASSISTANT',
    ]);
    // The tool's answers were written into the response by the environment, not the policy: drawn dashed.
    assert.equal(await ep(frame).locator('.turn.environment').count(), 2);
    await ep(frame).locator('.badge.warn', { hasText: 'unclosed tag' }).waitFor();
    await ep(frame).locator('.part-tool_call .part-text', { hasText: '"exam": "chest_xray"' }).waitFor();
    await ep(frame).locator('.group-title', { hasText: 'GRPO group 0 · n=4' }).waitFor();

    // Replay: one turn, then the next ones with the button and the keyboard, and back.
    await ep(frame).locator('#replay-toggle').click();
    await ep(frame).locator('.turn-counter', { hasText: 'turn 1 / 7' }).waitFor();
    assert.equal(await ep(frame).locator('.turn').count(), 1);
    await ep(frame).locator('#turn-next').click();
    await ep(frame).locator('.turn-counter', { hasText: 'turn 2 / 7' }).waitFor();
    await ep(frame).press('ArrowRight');
    await ep(frame).press('ArrowRight');
    await ep(frame).locator('.turn-counter', { hasText: 'turn 4 / 7' }).waitFor();
    assert.deepEqual(await ep(frame).locator('.turn-role').allInnerTexts(), ['SYSTEM', 'USER', 'ASSISTANT', 'TOOL']);
    await ep(frame).press('ArrowLeft');
    await ep(frame).locator('.turn-counter', { hasText: 'turn 3 / 7' }).waitFor();
    await screenshot(page, 'episodes-replay');

    // Raw text is one click away.
    await ep(frame).locator('#raw-toggle').click();
    await ep(frame).locator('.raw-text', { hasText: '<|im_start|>system' }).waitFor();
    await ep(frame).locator('#raw-toggle').click();

    // The same prompt at every step, side by side: more correct diagnoses later.
    await ep(frame).locator('#compare').click();
    await ep(frame).locator('.cmp-col').nth(2).waitFor({ timeout: 20_000 });
    assert.deepEqual(await ep(frame).locator('.cmp-step').allInnerTexts(), ['step 1', 'step 2', 'step 3']);
    await ep(frame).locator('.cmp-col.current .cmp-step', { hasText: 'step 1' }).waitFor();
    assert.match(await ep(frame).locator('.cmp-col').nth(2).innerText(), /Community-acquired pneumonia/);
    await screenshot(page, 'episodes-compare');

    // Sort by score, descending, from the column header.
    await frame.locator('.vlist-hcell', { hasText: 'score' }).click();
    await frame.locator('.vlist-hcell', { hasText: 'score ▼' }).waitFor();
    const sorted = (await frame.locator('.vlist-row[data-index] .col-score').allInnerTexts()).map(Number);
    assert.deepEqual(
      sorted,
      [...sorted].sort((a, b) => b - a),
    );

    // The validation set is one select away.
    await frame.locator('#collection').click();
    await frame.locator('#collection').getByRole('option', { name: 'validation' }).click();
    await ep(frame).locator('.ep-title', { hasText: 'validation · step 2 · #0' }).waitFor();
    await ep(frame).locator('.breakdown th', { hasText: 'reward' }).waitFor();
    await page.close();
  });

  it('hostile model output is shown as text: nothing runs, nothing loads from outside', async (t) => {
    const hits: string[] = [];
    const server: Server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('gotcha');
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    // Closed even when an assertion fails, or the open server keeps the test process (and CI) alive.
    t.after(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const url = `http://127.0.0.1:${port}`;
    const payloads = [
      `<script>document.body.dataset.pwned='script';fetch('${url}/script')</script>`,
      `<img src="${url}/img" onerror="document.body.dataset.pwned='img'">`,
      `<a href="javascript:document.body.dataset.pwned='link'">click me</a>`,
      `<style>body{background:url(${url}/css)} .episode{display:none}</style><div style="background-image:url(${url}/inline)">x</div>`,
      `<svg onload="document.body.dataset.pwned='svg'"><image href="${url}/svg"/></svg>`,
      `<iframe src="${url}/iframe" onload="document.body.dataset.pwned='iframe'"></iframe>`,
      `![x-ray](${url}/markdown.png) [click](javascript:alert(1))`,
      `<img src=x onerror="window.parent.postMessage({type:'sendToPlayground',collection:'hostile',step:1},'*');document.body.dataset.pwned='post'">`,
      `control: \u0000\u0007\u001b[31mred\u001b[0m \u202eevil\u202c zero\u200bwidth`,
    ];
    const ws = mkdtempSync(join(tmpdir(), 'medrl-hostile-'));
    mkdirSync(join(ws, 'hostile'));
    const lines = payloads.map((p, i) =>
      JSON.stringify({
        input: `<|im_start|>user\nCase ${i}: ${p}<|im_end|>\n<|im_start|>assistant\n`,
        output: p,
        gts: p,
        score: i / 10,
        step: 1,
        data_source: `<b onmouseover="document.body.dataset.pwned='ds'">ds</b>`,
        [`<img src="${url}/key" onerror="document.body.dataset.pwned='key'">`]: p,
      }),
    );
    lines.push(
      JSON.stringify({
        input: 'huge',
        output: `${'A'.repeat(3_000_000)}<script>document.body.dataset.pwned='huge'</script>`,
        gts: 'x',
        score: 0,
        step: 1,
      }),
    );
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"input": "bad bytes", "output": "before '),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(' after", "gts": "x", "score": 0, "step": 1}\n'),
    ]);
    writeFileSync(join(ws, 'hostile/1.jsonl'), Buffer.concat([Buffer.from(lines.join('\n') + '\n'), invalidUtf8]));
    // The payloads' URLs and IPs are identifiers to the PHI mask, which would show them as chips; this test checks that the
    // characters the model wrote are shown as text, so it looks with masking off (phi-mask.test.ts covers the chips).
    mkdirSync(join(ws, '.vscode'));
    writeFileSync(join(ws, '.vscode/settings.json'), JSON.stringify({ 'medrl.phi.mask': false }));

    const page = await cs.open(ws);
    page.on('dialog', (d) => void d.dismiss());
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'hostile' }).first().click();
    const frame = await openFromExplorer(page, '1.jsonl');
    await frame.locator('.count', { hasText: `${payloads.length + 2} of ${payloads.length + 2} episodes` }).waitFor({ timeout: 20_000 });
    for (let i = 0; i < payloads.length + 2; i++) {
      await frame.locator(`.vlist-row[data-index="${i}"]`).click();
      await ep(frame)
        .locator('.ep-title', { hasText: `#${i}` })
        .waitFor({ timeout: 20_000 });
      if (i < payloads.length) {
        // The payload is on screen, as the characters the model wrote.
        const shown = await ep(frame).locator('.turn.role-assistant .part-text').first().textContent();
        assert.ok(shown?.includes(payloads[i]!.trim().slice(0, 20)), `payload ${i} shown as text: ${shown}`);
        await ep(frame).locator('#raw-toggle').click();
        await ep(frame).locator('.raw-text').first().waitFor();
        await ep(frame).locator('#raw-toggle').click();
      }
      await frame.locator('.vlist-row[data-index] .vlist-cell').first().hover();
    }
    await ep(frame).locator('.turn.role-assistant .part-text', { hasText: 'before \uFFFD' }).first().waitFor();
    await frame.locator(`.vlist-row[data-index="${payloads.length}"]`).click();
    await ep(frame)
      .locator('.ep-title', { hasText: `#${payloads.length}` })
      .waitFor();
    await ep(frame).locator('.show-all', { hasText: 'Show all 200,' }).first().click();
    await ep(frame).locator('.part-text', { hasText: 'more characters not shown' }).first().waitFor();
    await frame.locator(`.vlist-row[data-index="0"]`).click();
    await ep(frame).locator('#compare').click();
    await ep(frame).locator('.cmp-col').first().waitFor();
    await screenshot(page, 'episodes-hostile');

    const state = await frame.locator('body').evaluate((b) => ({
      pwned: b.dataset.pwned,
      title: document.title,
      injected: b.querySelectorAll(
        '.episode script, .episode img, .episode iframe, .episode svg, .episode a, .episode style, .vlist b, .vlist img, .vlist-header img',
      ).length,
      hidden: getComputedStyle(b.querySelector('.episode')!).display,
    }));
    assert.equal(state.pwned, undefined, 'no payload ran');
    assert.equal(state.injected, 0, 'no element came from the data');
    assert.notEqual(state.hidden, 'none', 'no CSS from the data applied');
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(hits, [], "nothing was requested from the payloads' server");
    assert.doesNotMatch(
      cs.extensionLog(),
      /sending \d+ episode\(s\) of hostile|ignored an invalid message/,
      'no message from a payload reached the extension',
    );
    await page.close();
  });
});
