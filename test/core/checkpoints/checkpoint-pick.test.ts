import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Checkpoint } from '../../../src/core/checkpoints/checkpoint';
import { checkpointPickItems } from '../../../src/core/checkpoints/checkpoint-pick';

function ck(step: number, mtimeMs: number, extra: Partial<Checkpoint> = {}): Checkpoint {
  return {
    host: 'gpubox',
    path: `/runs/r1/checkpoints/global_step_${step}`,
    root: '/runs/r1/checkpoints',
    framework: 'verl',
    step,
    sizeBytes: 3 * 1024 ** 3,
    mtimeMs,
    ageMs: 5 * 60_000,
    latest: false,
    kind: 'verl-fsdp',
    parts: ['actor'],
    run: { host: 'gpubox', dir: '/runs/r1', name: 'grpo-pubmedqa' },
    ...extra,
  };
}

describe('checkpointPickItems: the checkpoints a quick pick offers', () => {
  it('lists the newest first, each named by its run and step folder, with host, step, size, age and latest', () => {
    const items = checkpointPickItems([{ c: ck(10, 1000) }, { c: ck(30, 3000, { latest: true }) }, { c: ck(20, 2000) }], (v) => v.c);
    assert.deepEqual(
      items.map((i) => i.value.c.step),
      [30, 20, 10],
    );
    assert.equal(items[0]!.label, 'grpo-pubmedqa global_step_30');
    assert.match(items[0]!.description, /^gpubox · step 30 · 3(\.0)? GiB · 5 min ago · latest$/);
    assert.doesNotMatch(items[1]!.description, /latest/);
  });

  it('names a checkpoint outside a known run by its checkpoints folder', () => {
    const [item] = checkpointPickItems([ck(5, 1, { run: undefined })], (c) => c);
    assert.equal(item!.label, 'checkpoints global_step_5');
  });
});
