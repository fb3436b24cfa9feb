import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { run } from './run-cli';

const REWARD = 'configs/rewards/multiple_choice_exact.py';

/** The demo workspace with its runs in a temporary folder, and local-demo.yaml at the stand-in's quick pace. */
async function demoWorkspace(): Promise<{ demo: string; runsDir: string }> {
  const root = mkdtempSync(join(tmpdir(), 'medrl-rerun-cli-'));
  const demo = join(root, 'demo');
  assert.equal((await run(['demo', demo])).code, 0);
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(root, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  const spec = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  spec.setIn(['overrides', 'data.train_batch_size'], 8);
  spec.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  spec.setIn(['env', 'MEDRL_STANDIN_STEPS'], '2');
  writeFileSync(join(demo, 'configs/quick.yaml'), spec.toString());
  return { demo, runsDir: join(root, 'runs') };
}

async function waitFor(demo: string, id: string): Promise<void> {
  const follow = await run(['logs', id, '--follow'], demo);
  assert.equal(follow.code, 0, follow.err);
}

interface Refusal {
  refused: string;
  rerunOf: { id: string; host: string };
  differences: { path: string; a: unknown; b: unknown; diff?: string }[];
}

describe('medrl runs rerun (the demo workspace, local host, stand-in trainer)', () => {
  it('re-runs a run whose host and reward files are unchanged, and refuses, naming the file, once one changed', async () => {
    const { demo, runsDir } = await demoWorkspace();
    const sub = await run(['submit', 'configs/quick.yaml', '--json'], demo);
    assert.equal(sub.code, 0, sub.err);
    const a = JSON.parse(sub.out) as { id: string };
    await waitFor(demo, a.id);
    // The spec in the workspace changes after the submit: the re-run submits the run folder's spec.yaml, not this one.
    const edited = parseDocument(readFileSync(join(demo, 'configs/quick.yaml'), 'utf8'));
    edited.setIn(['overrides', 'data.train_batch_size'], 64);
    writeFileSync(join(demo, 'configs/quick.yaml'), edited.toString());

    const again = await run(['runs', 'rerun', a.id, '--json'], demo);
    assert.equal(again.code, 0, again.err);
    const b = JSON.parse(again.out) as { id: string; host: string; rerunOf: { id: string; host: string } };
    assert.notEqual(b.id, a.id);
    assert.deepEqual(b.rerunOf, { id: a.id, host: 'local' });
    await waitFor(demo, b.id);
    const shown = JSON.parse((await run(['runs', 'show', b.id, '--json'], demo)).out) as { manifest: { rerunOf: unknown } };
    assert.deepEqual(shown.manifest.rerunOf, { id: a.id, host: 'local' });
    assert.match((await run(['runs', 'show', b.id], demo)).out, new RegExp(`^re-run exactly of ${a.id} on local$`, 'm'));
    const diff = JSON.parse((await run(['runs', 'diff', a.id, b.id, '--json'], demo)).out) as { differences: unknown[] };
    assert.deepEqual(diff.differences, []);

    // One line of the reward function changes in the workspace: refused, with that file and its diff, and nothing written.
    const reward = readFileSync(join(demo, REWARD), 'utf8');
    writeFileSync(join(demo, REWARD), reward.replace('    if not pred_n:\n', '    if not pred_n or pred_n == "none":\n'));
    const folders = readdirSync(runsDir).length;
    const refused = await run(['runs', 'rerun', a.id, '--json'], demo);
    assert.equal(refused.code, 1, refused.err);
    const r = JSON.parse(refused.out) as Refusal;
    assert.deepEqual(
      r.differences.map((d) => d.path),
      ['reward.files.multiple_choice_exact.py'],
    );
    assert.match(r.differences[0]!.diff!, /^-    if not pred_n:\n\+    if not pred_n or pred_n == "none":$/m);
    assert.equal(readdirSync(runsDir).length, folders);
    const human = await run(['runs', 'rerun', a.id], demo);
    assert.equal(human.code, 1);
    assert.match(human.err, new RegExp(`^${a.id} was not re-run: 1 thing on local differs from its provenance\\.json`, 'm'));
    assert.match(human.err, /^reward\.files\.multiple_choice_exact\.py: [0-9a-f]{64} → [0-9a-f]{64}$/m);
    writeFileSync(join(demo, REWARD), reward);

    // A data file replaced on the host (test.parquet, the spec's data.val, by another parquet file): refused, naming that file's size and hash.
    copyFileSync(join(demo, 'data/pubmedqa/verl/train.parquet'), join(demo, 'data/pubmedqa/verl/test.parquet'));
    const data = await run(['runs', 'rerun', a.id, '--json'], demo);
    assert.equal(data.code, 1, data.err);
    const paths = (JSON.parse(data.out) as Refusal).differences.map((d) => d.path);
    assert.deepEqual(
      paths.filter((p) => !p.endsWith('.rows')),
      ['data.val[0].size', 'data.val[0].sha256'],
    );
    assert.equal(readdirSync(runsDir).length, folders);
  });
});
