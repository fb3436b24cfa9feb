import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ROOT,
  codeServerForSuite,
  focusPane,
  openFile,
  openMedrlContainer,
  pane,
  runCommand,
  runCommandAndPick,
  screenshot,
} from './harness/code-server';
import { webviewWith } from './harness/playground-frame';

/**
 * Real TRL through the extension: a GRPO spec on a tiny random Qwen2 (test/gpu/make_tiny_models.py) with a reward
 * function, submitted from the palette to the `local` host, where `trl grpo` runs for real on the CPU (TRL from the
 * project's Python environment, .tools/verl-venv). The user watches it succeed, its reward curve drawn from what TRL
 * logged, and opens one of TRL's own completions in the replay.
 */
const VENV_BIN = join(ROOT, '.tools', 'verl-venv', 'bin');
const STEPS = 4;

function workspace(): string {
  const home = mkdtempSync(join(tmpdir(), 'medrl-e2e-real-trl-'));
  const tiny = join(home, 'tiny');
  const made = spawnSync(join(VENV_BIN, 'python'), [join(ROOT, 'test', 'gpu', 'make_tiny_models.py'), tiny], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const ws = join(home, 'ws');
  mkdirSync(join(ws, 'configs'), { recursive: true });
  mkdirSync(join(ws, 'rewards'));
  copyFileSync(join(ROOT, 'test', 'gpu', 'rewards', 'pubmedqa_answer.py'), join(ws, 'rewards', 'pubmedqa_answer.py'));
  // JSON strings are YAML strings: paths go in as they are.
  const q = JSON.stringify;
  writeFileSync(
    join(ws, 'medrl.yaml'),
    [
      'version: 1',
      'hosts:',
      '  local:',
      `    runsDir: ${q(join(ws, 'runs'))}`,
      `    setup: [${q(`export PATH=${VENV_BIN}:$PATH`)}]`,
      '    env: { HF_HUB_OFFLINE: "1", HF_DATASETS_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1", WANDB_MODE: disabled }',
      'defaults: { host: local, scheduler: ssh }',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(ws, 'configs', 'tiny-grpo.yaml'),
    [
      'name: tiny-grpo-real',
      'framework: trl',
      'algorithm: grpo',
      'host: local',
      'scheduler: ssh',
      `model: ${q(join(tiny, 'policy'))}`,
      `data: { train: ${q(join(tiny, 'data', 'grpo', 'train.jsonl'))} }`,
      'resources: { nodes: 1, gpusPerNode: 0 }',
      'rollout: { engine: hf, n: 4 }',
      'reward: { path: rewards/pubmedqa_answer.py, function: answer_match }',
      'overrides:',
      `  max_steps: ${STEPS}`,
      '  save_steps: 2',
      '  logging_steps: 1',
      '  per_device_train_batch_size: 8',
      '  max_completion_length: 32',
      '  learning_rate: 1.0e-4',
      '  seed: 42',
      '  use_cpu: true',
      '  bf16: false',
      '',
    ].join('\n'),
  );
  return ws;
}

describe('real TRL from the palette: submit, watch the curve, replay a completion', () => {
  const cs = codeServerForSuite();

  it('a real trl grpo run on the CPU succeeds in the Runs view, its reward is charted and its completions replay', async () => {
    const ws = workspace();
    const page = await cs.open(ws);
    await openFile(page, 'tiny-grpo.yaml');
    await runCommand(page, 'MedRL: Submit Run Spec');
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'submitted tiny-grpo-real' }).waitFor({ timeout: 60_000 });
    await openMedrlContainer(page);
    await focusPane(page, 'Runs');
    const row = pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'tiny-grpo-real' });
    await row.waitFor({ timeout: 30_000 });
    await pane(page, 'Runs').locator('.monaco-list-row', { hasText: 'succeeded' }).waitFor({ timeout: 300_000 });
    assert.match(await row.innerText(), new RegExp(`succeeded · step ${STEPS}\\b`));
    await screenshot(page, 'real-trl-succeeded');

    // What TRL itself wrote: trainer_state.json's rewards, and one completion of step 1.
    const runs = join(ws, 'runs');
    const dir = join(
      runs,
      readdirSync(runs).find((d) => d.startsWith('tiny-grpo-real'))!,
    );
    const state = JSON.parse(readFileSync(join(dir, 'output', `checkpoint-${STEPS}`, 'trainer_state.json'), 'utf8')) as {
      log_history: Array<{ step: number; reward?: number }>;
    };
    const rewards = state.log_history.filter((e) => typeof e.reward === 'number');
    assert.equal(rewards.length, STEPS, 'TRL logged a reward every step');

    await runCommandAndPick(page, 'MedRL: Open Run Dashboard', 'tiny-grpo-real');
    const dashboard = await webviewWith(page, 'main.charts', 'run dashboard');
    const chart = dashboard.locator('section.chart[data-chart="reward"]');
    await chart.locator('.u-over').waitFor({ timeout: 60_000 });
    assert.equal(await chart.getAttribute('data-points'), String(STEPS), 'one point per logged step');
    await screenshot(page, 'real-trl-dashboard');

    await runCommandAndPick(page, 'MedRL: Open Episode Replay', 'tiny-grpo-real');
    const replay = await webviewWith(page, '.vlist-row', 'episode replay');
    await replay.locator('.vlist-row[data-index]').first().waitFor({ timeout: 60_000 });
    await replay.locator('.episode .ep-title').first().waitFor({ timeout: 30_000 });
    // The open episode is one of TRL's completions: a user turn with the dataset's question, then the model's answer.
    const turns = replay.locator('.episode .turn');
    await turns.first().waitFor();
    assert.ok((await turns.count()) >= 2, 'prompt and completion');
    await screenshot(page, 'real-trl-replay');
    await page.close();
  });
});
