import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { CodeServer, ROOT, focusPane, openMedrlContainer, pane, runContextMenuItem, screenshot } from './harness/code-server';
import { playgroundFrame } from './harness/playground-frame';

const cli = (args: string[], cwd: string) =>
  execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8' });

describe("back-test in real VS Code (code-server + Chromium): a new reward function over the demo run's rollouts", () => {
  const cs = new CodeServer();
  const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-backtest-'));
  const demo = join(home, 'demo');
  const runsDir = join(home, 'runs');
  let runDir = '';
  before(async () => {
    // The demo workspace and its run (the stand-in verl trainer calls the demo's real exact-match reward and dumps rollouts).
    cli(['demo', demo], home);
    const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
    cfg.setIn(['hosts', 'local', 'runsDir'], runsDir);
    writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
    const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
    spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
    spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], '3');
    writeFileSync(join(demo, 'configs/local-demo.yaml'), spec.toString());
    runDir = (JSON.parse(cli(['submit', 'configs/local-demo.yaml', '--json'], demo)) as { dir: string }).dir;
    for (let i = 0; !existsSync(join(runDir, 'exit_code')); i++) {
      if (i > 600) throw new Error(`the demo run did not end: ${readFileSync(join(runDir, 'output.log'), 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(
      readFileSync(join(runDir, 'exit_code'), 'utf8').trim(),
      '0',
      readFileSync(join(runDir, 'output.log'), 'utf8').slice(-2000),
    );
    // The new reward: an answer counts only inside the <answer> tag (the demo's reward also took "Answer: X" and the last line).
    writeFileSync(
      join(demo, 'configs/rewards/strict_tag.py'),
      [
        'import re',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):',
        '    found = re.findall(r"<answer>(.*?)</answer>", solution_str, re.S)',
        '    return 1.0 if found and found[-1].strip().lower() == str(ground_truth).strip().lower() else 0.0',
      ].join('\n'),
    );
    await cs.start({ 'security.workspace.trust.enabled': false });
  });
  after(async () => {
    await cs.stop();
  });

  it("from the Runs view: the run's rollouts become the samples, the new scores are compared with training in the page", async () => {
    // What the comparison must say, from the dumps themselves: the demo reward wrote `format` (1 when the tag was used),
    // so the samples that change are those that scored 1 in training without the tag.
    const rollouts = readdirSync(join(runDir, 'rollouts'))
      .filter((f) => /^\d+\.jsonl$/.test(f))
      .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    const dumped = rollouts.flatMap((f) =>
      readFileSync(join(runDir, 'rollouts', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { score: number; format: number }),
    );
    const changed = dumped.flatMap((d, i) => (d.score === 1 && d.format === 0 ? [i] : []));
    assert.ok(
      dumped.length > 0 && changed.length > 0 && changed.length < dumped.length,
      `the demo run has samples that change and samples that do not (${changed.length} of ${dumped.length})`,
    );

    const page = await cs.open(demo);
    await openMedrlContainer(page);
    await focusPane(page, 'Runs');
    const runs = pane(page, 'Runs');
    const row = runs.locator('.monaco-list-row', { hasText: 'demo-pubmedqa-grpo' }).first();
    await row.waitFor({ timeout: 30_000 });
    await runs.locator('.monaco-list-row', { hasText: 'succeeded' }).first().waitFor({ timeout: 30_000 });
    await runContextMenuItem(page, row, "Back-test a Reward Function on a Run's Rollouts");

    const frame = await playgroundFrame(page);
    await frame
      .locator('#status', { hasText: `${dumped.length} samples from local:${runDir}/rollouts (${rollouts.length} steps)` })
      .waitFor({ timeout: 30_000 });
    const training = await frame.locator('#results tbody td.training').allTextContents();
    assert.deepEqual(
      training,
      dumped.map((d) => String(d.score)),
      'the training score of every rollout is shown',
    );

    await frame.locator('#scorer-a').click();
    await frame.locator('#scorer-a li[role="option"]', { hasText: 'strict_tag.py:compute_score' }).click();
    await frame.locator('#run-all').click();
    await frame.locator('#status', { hasText: 'Done.' }).waitFor({ timeout: 60_000 });

    const scores = await frame.locator('#results tbody td.score').allTextContents();
    assert.deepEqual(
      scores,
      dumped.map((d, i) => (changed.includes(i) ? '0' : String(d.score))),
    );
    const same = (((dumped.length - changed.length) / dumped.length) * 100).toFixed(1);
    const summary = await frame.locator('#summary').innerText();
    assert.match(
      summary,
      new RegExp(
        `Back-test: A against the training scores on ${dumped.length} samples: .*same pass/fail ${same.replace('.', '\\.')}%; differ on #${changed.slice(0, 20).join(', #')}(\\n|$)`,
      ),
    );
    await screenshot(page, 'playground-backtest');
    await page.close();
  });
});
