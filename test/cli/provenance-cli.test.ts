import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { run } from './run-cli';
import { resumeSpecText } from '../../src/core/checkpoints/resume-spec';
import type { Checkpoint } from '../../src/core/checkpoints/checkpoint';

const REWARD = 'configs/rewards/multiple_choice_exact.py';

/** The demo workspace with its runs in a temporary folder, and local-demo.yaml at the stand-in's quick pace. */
async function demoWorkspace(): Promise<{ demo: string; runsDir: string }> {
  const root = mkdtempSync(join(tmpdir(), 'medrl-provenance-cli-'));
  const demo = join(root, 'demo');
  assert.equal((await run(['demo', demo])).code, 0);
  const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
  cfg.setIn(['hosts', 'local', 'runsDir'], join(root, 'runs'));
  writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
  return { demo, runsDir: join(root, 'runs') };
}

/** local-demo.yaml with a train batch size, as configs/NAME.yaml; the stand-in runs 2 quick steps. */
function specWithBatch(demo: string, name: string, batch: number): string {
  const doc = parseDocument(readFileSync(join(demo, 'configs/local-demo.yaml'), 'utf8'));
  doc.setIn(['overrides', 'data.train_batch_size'], batch);
  doc.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  doc.setIn(['env', 'MEDRL_STANDIN_STEPS'], '2');
  writeFileSync(join(demo, `configs/${name}.yaml`), doc.toString());
  return `configs/${name}.yaml`;
}

async function submit(demo: string, spec: string): Promise<{ id: string; dir: string }> {
  const r = await run(['submit', spec, '--json'], demo);
  assert.equal(r.code, 0, r.err);
  const record = JSON.parse(r.out) as { id: string; dir: string };
  const follow = await run(['logs', record.id, '--follow'], demo);
  assert.equal(follow.code, 0, follow.err);
  return record;
}

describe('medrl runs show / runs diff (the demo workspace, local host, stand-in trainer)', () => {
  it('two runs that differ in one override and one line of the reward function differ in exactly those two', async () => {
    const { demo } = await demoWorkspace();
    const a = await submit(demo, specWithBatch(demo, 'a', 8));
    const reward = readFileSync(join(demo, REWARD), 'utf8');
    writeFileSync(join(demo, REWARD), reward.replace('    if not pred_n:\n', '    if not pred_n or pred_n == "none":\n'));
    const b = await submit(demo, specWithBatch(demo, 'b', 16));

    // provenance.json is the run's own (0600), with the data measured on the host.
    assert.equal(statSync(join(a.dir, 'provenance.json')).mode & 0o777, 0o600);
    const show = await run(['runs', 'show', a.id, '--json'], demo);
    assert.equal(show.code, 0, show.err);
    const shown = JSON.parse(show.out) as {
      record: { id: string };
      manifest: { version: number; run: { id: string }; data: { field: string; sha256: string; size: number }[]; reward: object };
    };
    assert.equal(shown.record.id, a.id);
    assert.equal(shown.manifest.version, 1);
    assert.equal(shown.manifest.run.id, a.id);
    assert.deepEqual(
      shown.manifest.data.map((d) => d.field),
      ['data.train', 'data.val'],
    );
    assert.equal(shown.manifest.data[0]!.size, statSync(join(demo, 'data/pubmedqa/verl/train.parquet')).size);
    assert.match(shown.manifest.data[0]!.sha256, /^[0-9a-f]{64}$/);
    const text = await run(['runs', 'show', a.id], demo);
    assert.match(text.out, /^spec: spec\.yaml sha256 [0-9a-f]{64}$/m);
    assert.match(text.out, /^ {2}data\.train .*train\.parquet: \d+ bytes/m);

    const diff = await run(['runs', 'diff', a.id, b.id, '--json'], demo);
    assert.equal(diff.code, 0, diff.err);
    const { differences, notes } = JSON.parse(diff.out) as {
      differences: { path: string; a: unknown; b: unknown; diff?: string }[];
      notes: string[];
    };
    assert.deepEqual(notes, []);
    assert.deepEqual(
      differences.map((d) => d.path),
      ['overrides.data.train_batch_size', 'reward.files.multiple_choice_exact.py'],
    );
    assert.deepEqual([differences[0]!.a, differences[0]!.b], [8, 16]);
    assert.match(differences[1]!.diff!, /^-    if not pred_n:\n\+    if not pred_n or pred_n == "none":$/m);
    assert.match(String(differences[1]!.a), /^[0-9a-f]{64}$/);

    const human = await run(['runs', 'diff', a.id, b.id], demo);
    assert.match(human.out, /^overrides\.data\.train_batch_size: 8 → 16$/m);
    assert.match(human.out, /^reward\.files\.multiple_choice_exact\.py: [0-9a-f]{64} → [0-9a-f]{64}$/m);
    assert.match(human.out, /^--- a\/multiple_choice_exact\.py\n\+\+\+ b\/multiple_choice_exact\.py\n@@ /m);

    const same = await run(['runs', 'diff', a.id, a.id, '--json'], demo);
    assert.deepEqual(JSON.parse(same.out), { differences: [], notes: [] });
  });

  it('a run resumed from a checkpoint records it, and runs show names the step where its reward changed', async () => {
    const { demo } = await demoWorkspace();
    const specA = specWithBatch(demo, 'a', 8);
    const doc = parseDocument(readFileSync(join(demo, specA), 'utf8'));
    doc.setIn(['overrides', 'trainer.save_freq'], 1);
    writeFileSync(join(demo, specA), doc.toString());
    const a = await submit(demo, specA);
    const path = join(a.dir, 'checkpoints', 'global_step_1');
    assert.ok(statSync(path).isDirectory());
    // The spec "Resume from Checkpoint" writes, with one line of the reward changed before it is submitted.
    const ck = { host: 'local', path, framework: 'verl', step: 1 } as Checkpoint;
    writeFileSync(join(demo, 'configs/resumed.yaml'), resumeSpecText(readFileSync(join(a.dir, 'spec.yaml'), 'utf8'), ck).text);
    const reward = readFileSync(join(demo, REWARD), 'utf8');
    writeFileSync(join(demo, REWARD), reward.replace('    if not pred_n:\n', '    if not pred_n or pred_n == "none":\n'));
    const b = await submit(demo, 'configs/resumed.yaml');

    const show = await run(['runs', 'show', b.id, '--json'], demo);
    assert.equal(show.code, 0, show.err);
    const shown = JSON.parse(show.out) as {
      manifest: { resumedFrom: unknown };
      changes: { points: { step: number; run: string; from: string; what: string[] }[]; notes: string[] };
    };
    assert.deepEqual(shown.manifest.resumedFrom, { checkpoint: path, step: 1, run: { id: a.id, dir: a.dir } });
    assert.deepEqual(shown.changes, {
      points: [{ step: 1, run: b.id, from: a.id, what: ['reward.files.multiple_choice_exact.py'] }],
      notes: [],
    });
    const text = await run(['runs', 'show', b.id], demo);
    assert.match(text.out, new RegExp(`^resumed from: ${path} \\(run ${a.id}, step 1\\)$`, 'm'));
    assert.ok(
      text.out.split('\n').includes(`step 1: reward file multiple_choice_exact.py changed (${b.id} resumed from ${a.id})`),
      text.out,
    );
    // The run it resumed from started fresh: no resume, no changes.
    const first = JSON.parse((await run(['runs', 'show', a.id, '--json'], demo)).out) as { manifest: object; changes: unknown };
    assert.equal('resumedFrom' in first.manifest, false);
    assert.deepEqual(first.changes, { points: [], notes: [] });
  });
});
