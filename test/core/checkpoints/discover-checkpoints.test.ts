import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { discoverCheckpoints } from '../../../src/core/checkpoints/discover-checkpoints';
import { writeStandInRun } from '../../fixtures/stand-in-checkpoints';

describe('checkpoint discovery (one round trip per host)', () => {
  const host = new LocalHost();

  it('finds verl and TRL checkpoints of every run with step, size, kind and latest', async () => {
    const runs = mkdtempSync(join(tmpdir(), "ck runs 'q' "));
    writeStandInRun(runs, { id: 'verl-ppo', framework: 'verl', steps: [10, 20, 30], latest: 20, critic: true, lora: true });
    writeStandInRun(runs, { id: 'verl-mega', framework: 'verl', steps: [5], megatron: true });
    writeStandInRun(runs, { id: 'trl-sft', framework: 'trl', steps: [100, 200] });
    writeStandInRun(runs, { id: 'trl-lora', framework: 'trl', steps: [50], lora: true });
    mkdirSync(join(runs, 'not-a-run'));
    const before = host.stats().roundTrips;
    const d = await discoverCheckpoints(host, { runsDir: runs });
    assert.equal(host.stats().roundTrips - before, 1, 'the whole tree in one round trip');
    assert.deepEqual(d.runs.map((r) => r.run.id).sort(), ['trl-lora', 'trl-sft', 'verl-mega', 'verl-ppo']);

    const ppo = d.runs.find((r) => r.run.id === 'verl-ppo')!;
    assert.equal(ppo.run.framework, 'verl');
    assert.deepEqual(ppo.checkpoints.map((c) => [c.step, c.latest]).sort(), [
      [10, false],
      [20, true],
      [30, false],
    ]);
    const s20 = ppo.checkpoints.find((c) => c.step === 20)!;
    assert.equal(s20.kind, 'verl-fsdp');
    assert.deepEqual(s20.parts, ['actor', 'critic', 'huggingface', 'lora_adapter']);
    assert.equal(s20.path, join(runs, 'verl-ppo/checkpoints/global_step_20'));
    assert.equal(s20.mergeable, join(s20.path, 'actor'));
    assert.equal(s20.servable, undefined, 'FSDP shards need a merge before serving');
    // 2 roles x 2 ranks x (1000+500+10) + data.pt 64 + the json files
    assert.ok(s20.sizeBytes > 2 * 2 * 1510 + 64 && s20.sizeBytes < 2 * 2 * 1510 + 64 + 1000, String(s20.sizeBytes));
    assert.ok(s20.ageMs >= 0 && s20.ageMs < 120_000);

    const mega = d.runs.find((r) => r.run.id === 'verl-mega')!.checkpoints[0]!;
    assert.equal(mega.kind, 'verl-megatron');
    assert.ok(mega.parts.includes('dist_ckpt'));

    const sft = d.runs.find((r) => r.run.id === 'trl-sft')!.checkpoints;
    assert.deepEqual(sft.map((c) => [c.step, c.latest, c.kind]).sort(), [
      [100, false, 'trl-full'],
      [200, true, 'trl-full'],
    ]);
    assert.equal(sft.find((c) => c.step === 200)!.servable, join(runs, 'trl-sft/output/checkpoint-200'));
    assert.ok(sft[0]!.parts.includes('trainer_state'));
    const lora = d.runs.find((r) => r.run.id === 'trl-lora')!.checkpoints[0]!;
    assert.equal(lora.kind, 'trl-lora');
    assert.equal(lora.servable, undefined);
  });

  it('takes output folders and single checkpoint paths, and reports missing ones', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'ck-'));
    const dir = writeStandInRun(runs, { id: 'r', framework: 'verl', steps: [1, 2, 3] });
    const d = await discoverCheckpoints(host, {
      paths: [join(dir, 'checkpoints'), join(dir, 'checkpoints/global_step_2/'), join(runs, 'nope')],
    });
    assert.deepEqual(d.missing, [join(runs, 'nope')]);
    assert.deepEqual(d.runs, []);
    assert.deepEqual(
      d.loose.map((c) => [c.step, c.latest]),
      [
        [1, false],
        [2, false],
        [3, true],
        [2, false],
      ],
    );
    const viaRun = await discoverCheckpoints(host, { paths: [dir] });
    assert.equal(viaRun.runs[0]!.checkpoints.length, 3);
  });

  it('a broken run.json is reported with where, and its checkpoints still listed', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'ck-'));
    const dir = writeStandInRun(runs, { id: 'bad', framework: 'trl', steps: [7] });
    writeFileSync(join(dir, 'run.json'), '{"id": "bad",');
    const d = await discoverCheckpoints(host, { runsDir: runs });
    assert.match(d.runs[0]!.problem!, new RegExp(`local:${dir}/run.json is not JSON`));
    assert.equal(d.runs[0]!.checkpoints[0]!.step, 7);
  });

  it('an empty or missing runs folder has no runs', async () => {
    assert.deepEqual((await discoverCheckpoints(host, { runsDir: join(tmpdir(), 'no-such-runs-dir-xyz') })).runs, []);
  });
});
