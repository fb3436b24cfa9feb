import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { checkHost } from '../../../src/core/runs/host-checks';
import { runSpecSchema } from '../../../src/core/runs/run-spec';

// The host checks before submit, on this machine's python3: DeepSpeed's presence is read with importlib.metadata from
// the run's environment (a dist-info folder on PYTHONPATH stands for `pip install deepspeed`).
const dir = mkdtempSync(join(tmpdir(), 'medrl-ds-'));
const site = join(dir, 'site');
mkdirSync(join(site, 'deepspeed-0.16.4.dist-info'), { recursive: true });
writeFileSync(join(site, 'deepspeed-0.16.4.dist-info/METADATA'), 'Metadata-Version: 2.1\nName: deepspeed\nVersion: 0.16.4\n');
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const zero3Yaml = file(
  'zero3.yaml',
  'compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: none\nnum_processes: 8\n',
);
file('ds_z3.json', JSON.stringify({ zero_optimization: { stage: 3 }, train_micro_batch_size_per_gpu: 'auto' }));
const zero3Json = file(
  'zero3-file.yaml',
  `distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ${join(dir, 'ds_z3.json')}\n`,
);
const fsdp = file('fsdp.yaml', 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n');
const spec = runSpecSchema.parse({
  name: 'r',
  framework: 'trl',
  algorithm: 'sft',
  model: 'Qwen/Qwen2.5-0.5B',
  data: { train: 'd.jsonl' },
  entry: { script: 'train.py', accelerateConfig: 'zero3.yaml' },
  resources: { gpusPerNode: 0 },
});

async function check(config: string, withDeepSpeed: boolean) {
  return checkHost(new LocalHost(), {
    spec,
    specFile: 'configs/sft-zero3.yaml',
    scheduler: 'ssh',
    workdir: dir,
    setup: [withDeepSpeed ? `export PYTHONPATH=${site}` : 'export PYTHONPATH='],
    files: [{ field: 'entry.accelerateConfig', path: config }],
  });
}

describe('a TRL run with a DeepSpeed accelerate config on a host without DeepSpeed', () => {
  it('a ZeRO-3 config (zero_stage: 3) is refused at entry.accelerateConfig, naming the file, the stage and the host', async () => {
    const { problems } = await check(zero3Yaml, false);
    const p = problems.find((x) => x.field === 'entry.accelerateConfig');
    assert.ok(p, JSON.stringify(problems));
    assert.equal(p.severity, 'error');
    assert.equal(p.file, 'configs/sft-zero3.yaml');
    assert.match(
      p.message,
      new RegExp(`^${zero3Yaml} is a DeepSpeed ZeRO-3 config \\(distributed_type: DEEPSPEED\\), but DeepSpeed is not installed on local`),
    );
  });

  it('a deepspeed_config_file whose JSON says zero_optimization.stage 3 is refused the same way', async () => {
    const { problems } = await check(zero3Json, false);
    assert.match(problems.find((x) => x.field === 'entry.accelerateConfig')?.message ?? '', /is a DeepSpeed ZeRO-3 config/);
  });

  it('with DeepSpeed installed the run passes and its version is found; an FSDP config needs no DeepSpeed', async () => {
    const ok = await check(zero3Yaml, true);
    assert.deepEqual(
      ok.problems.filter((x) => x.field === 'entry.accelerateConfig'),
      [],
    );
    assert.equal(ok.deepspeed, '0.16.4');
    const f = await check(fsdp, false);
    assert.deepEqual(
      f.problems.filter((x) => x.field === 'entry.accelerateConfig'),
      [],
    );
  });
});
