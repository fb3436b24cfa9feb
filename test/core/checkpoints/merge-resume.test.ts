import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { LocalHost } from '../../../src/core/remote/local-host';
import { discoverCheckpoints } from '../../../src/core/checkpoints/discover-checkpoints';
import { mergeScript, startMerge, waitForMerge, type MergeProgress } from '../../../src/core/checkpoints/merge-checkpoint';
import { baseModelFolder, readRunSpecText, resumeSpecText } from '../../../src/core/checkpoints/resume-spec';
import { writeStandInBaseModel, writeStandInRun } from '../../fixtures/stand-in-checkpoints';

const STANDINS = join(__dirname, '../../../standins');

describe('merge to HuggingFace (stand-in verl merger that checks its arguments)', () => {
  const host = new LocalHost();

  it("merges a verl FSDP step as a tracked merge run, copies the base model's missing json files, and the step becomes servable", async () => {
    const root = mkdtempSync(join(tmpdir(), "merge it's "));
    const base = writeStandInBaseModel(join(root, 'base model'));
    const runs = join(root, 'runs');
    writeStandInRun(runs, { id: 'grpo', framework: 'verl', steps: [10], model: base, lora: true });
    const ck = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints[0]!;
    assert.equal(await baseModelFolder(host, ck), base);
    const job = await startMerge(host, ck, runs, { baseModel: base, env: { PYTHONPATH: STANDINS } });
    assert.equal(JSON.parse(readFileSync(join(job.dir, 'run.json'), 'utf8')).kind, 'merge');
    const progress: MergeProgress[] = [];
    const target = await waitForMerge(host, job, (p) => progress.push(p), { pollMs: 50 });
    assert.equal(target, join(ck.path, 'huggingface'));
    assert.deepEqual(readdirSync(target).sort(), [
      'config.json',
      'generation_config.json',
      'lora_adapter',
      'model.safetensors',
      'special_tokens_map.json',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    // generation_config.json and special_tokens_map.json came from the base model: the merger does not write them from actor/huggingface.
    assert.match(readFileSync(join(job.dir, 'output.log'), 'utf8'), /copied special_tokens_map\.json from .*base model/);
    assert.ok(
      progress.some((p) => p.fraction !== undefined && p.fraction > 0 && p.fraction < 1),
      'shard progress reported',
    );
    assert.equal(progress.at(-1)!.fraction, 1);
    const after = (await discoverCheckpoints(host, { runsDir: runs })).runs.find((r) => r.run.id === 'grpo')!.checkpoints[0]!;
    assert.equal(after.servable, target);
    assert.ok(after.parts.includes('merged'));
  });

  it("uses the legacy scripts/model_merger.py with --hf_model_path when the host's verl has no verl.model_merger", async () => {
    const root = mkdtempSync(join(tmpdir(), 'merge-legacy-'));
    const runs = join(root, 'runs');
    writeStandInRun(runs, { id: 'old', framework: 'verl', steps: [3], megatron: true });
    const verl = join(root, 'verl');
    mkdirSync(join(verl, 'scripts'), { recursive: true });
    copyFileSync(join(STANDINS, 'verl/model_merger.py'), join(verl, 'scripts/model_merger.py'));
    const ck = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints[0]!;
    const out = join(root, 'out');
    const job = await startMerge(host, ck, runs, { targetDir: out, workdir: verl });
    await waitForMerge(host, job, () => {}, { pollMs: 50 });
    const log = readFileSync(join(job.dir, 'output.log'), 'utf8');
    assert.match(log, /legacy scripts\/model_merger\.py \(backend megatron\)/);
    assert.match(log, /stand-in verl model merger/);
    assert.ok(existsSync(join(out, 'model.safetensors')));
    assert.ok(existsSync(join(out, 'tokenizer.json')), 'copied from actor/huggingface after the legacy merge');
  });

  it("a failed merge says why with the merger's own error", async () => {
    const runs = mkdtempSync(join(tmpdir(), 'merge-bad-'));
    const dir = writeStandInRun(runs, { id: 'broken', framework: 'verl', steps: [1] });
    const ck = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints[0]!;
    // One shard lost: the merger refuses.
    (await import('node:fs')).rmSync(join(dir, 'checkpoints/global_step_1/actor/model_world_size_2_rank_1.pt'));
    const job = await startMerge(host, ck, runs, { env: { PYTHONPATH: STANDINS } });
    await assert.rejects(
      waitForMerge(host, job, () => {}, { pollMs: 50 }),
      /merge failed \(exit code 1\)[\s\S]*expected 2 shards, found 1/,
    );
  });

  it('refuses to merge what is not a verl sharded checkpoint', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'merge-trl-'));
    writeStandInRun(runs, { id: 't', framework: 'trl', steps: [5] });
    const ck = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints[0]!;
    assert.throws(() => mergeScript(ck), /not a verl FSDP or Megatron checkpoint/);
  });
});

describe('resume training from a checkpoint', () => {
  const host = new LocalHost();
  it('clones the run spec with verl resume keys, keeping comments; TRL gets resume_from_checkpoint', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'resume-'));
    writeStandInRun(runs, { id: 'v', framework: 'verl', steps: [40] });
    writeStandInRun(runs, { id: 't', framework: 'trl', steps: [300] });
    const d = await discoverCheckpoints(host, { runsDir: runs });
    const v = d.runs.find((r) => r.run.id === 'v')!.checkpoints[0]!;
    const r = resumeSpecText(await readRunSpecText(host, v.run!.dir), v);
    assert.equal(r.name, 'v-resume-step40');
    const spec = parse(r.text);
    assert.equal(spec.overrides['trainer.resume_mode'], 'resume_path');
    assert.equal(spec.overrides['trainer.resume_from_path'], v.path);
    assert.equal(spec.overrides['trainer.save_freq'], 10);
    assert.match(r.text, /# keep/);
    assert.match(r.text, /^# Resumes v from step 40/);
    const t = d.runs.find((x) => x.run.id === 't')!.checkpoints[0]!;
    const rt = parse(resumeSpecText(await readRunSpecText(host, t.run!.dir), t).text);
    assert.equal(rt.overrides.resume_from_checkpoint, t.path);
  });

  it('a spec whose name is a path is written inside configs/, not where its name points', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'resume-'));
    writeStandInRun(runs, { id: 'v', framework: 'verl', steps: [40] });
    const v = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints[0]!;
    // The run folder is the host's: whoever could write it chose the name the resumed spec is saved under.
    const text = (await readRunSpecText(host, v.run!.dir)).replace(/^name: .*$/m, 'name: ../../../.bashrc');
    const r = resumeSpecText(text, v);
    const configs = join('/ws', 'configs');
    assert.equal(dirname(join(configs, `${r.stem}.yaml`)), configs);
    assert.equal(r.stem, 'bashrc-resume-step40');
    assert.equal(parse(r.text).name, '../../../.bashrc-resume-step40', 'the spec keeps its name; only the file name is made safe');
  });

  it('an invalid spec is refused with its file and field', () => {
    const ck = { framework: 'verl', step: 1, path: '/x', host: 'local' } as never;
    assert.throws(
      () => resumeSpecText('name: x\nframework: nope\n', ck, 'h:/runs/x/spec.yaml'),
      /h:\/runs\/x\/spec\.yaml:2:\d+ \(framework\)/,
    );
  });
});
