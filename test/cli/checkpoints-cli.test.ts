import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';
import { writeStandInRun } from '../fixtures/stand-in-checkpoints';

describe('medrl checkpoints, merge, download, serve, services', () => {
  const ws = mkdtempSync(join(tmpdir(), 'cli-ck-'));
  const runs = join(ws, 'runs');
  writeFileSync(
    join(ws, 'medrl.yaml'),
    `version: 1\nhosts:\n  local:\n    runsDir: ${runs}\n    env: { PYTHONPATH: ${join(__dirname, '../../standins')}, MEDRL_STANDIN_STARTUP_SECONDS: '0.5' }\n`,
  );
  writeStandInRun(runs, { id: 'grpo-demo', framework: 'verl', steps: [2, 4], latest: 4 });
  writeStandInRun(runs, { id: 'sft', framework: 'trl', steps: [100] });
  let serviceId: string | undefined;
  after(async () => {
    if (serviceId) await run(['services', 'stop', serviceId], ws);
  });

  it("lists every run's checkpoints, as text and JSON", async () => {
    const r = await run(['checkpoints'], ws);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /local {2}grpo-demo/);
    assert.match(r.out, /global_step +4 {2}verl-fsdp .* latest {2}critic\/score\/mean=0\.04000 .*global_step_4/);
    assert.match(r.out, /checkpoint +100 {2}trl-full/);
    const j = await run(['checkpoints', 'sft', '--json'], ws);
    const parsed = JSON.parse(j.out) as { host: string; runs: { checkpoints: { step: number; kind: string }[] }[] }[];
    assert.deepEqual(
      parsed[0]!.runs[0]!.checkpoints.map((c) => [c.step, c.kind]),
      [[100, 'trl-full']],
    );
    const missing = await run(['checkpoints', 'nope'], ws);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no run "nope" in/);
  });

  it('merges the latest verl step, downloads it, and serves it until ready', async () => {
    const m = await run(['merge', 'grpo-demo'], ws);
    assert.equal(m.code, 0, m.err);
    assert.equal(m.out.trim(), join(runs, 'grpo-demo/checkpoints/global_step_4/huggingface'));
    assert.match(m.err, /100% merged into/);
    const dest = join(ws, 'downloads');
    const d = await run(['download', 'grpo-demo', dest, '--step', '2'], ws);
    assert.equal(d.code, 0, d.err);
    assert.match(d.out, /global_step_2: \d+ file\(s\).*sha256 verified/);
    assert.ok(
      readFileSync(join(dest, 'global_step_2/actor/model_world_size_2_rank_1.pt')).equals(
        readFileSync(join(runs, 'grpo-demo/checkpoints/global_step_2/actor/model_world_size_2_rank_1.pt')),
      ),
    );
    // Unmerged FSDP shards cannot be served: the error says what to do.
    const bad = await run(['serve', 'grpo-demo', '--step', '2', '--standins'], ws);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /merge it to HuggingFace first/);
    process.env.MEDRL_TEST_KEY = 'k-123';
    const s = await run(['serve', 'grpo-demo', '--standins', '--api-key-env', 'MEDRL_TEST_KEY', '--json'], ws);
    assert.equal(s.code, 0, s.err);
    const svc = (JSON.parse(s.out) as { id: string; state: string; models: string[]; name: string }[])[0]!;
    serviceId = svc.id;
    assert.equal(svc.state, 'ready');
    assert.deepEqual(svc.models, ['grpo_demo_step4']);
    assert.match(s.err, /starting[\s\S]*ready/);
    const l = await run(['services', '--api-key-env', 'MEDRL_TEST_KEY'], ws);
    assert.match(l.out, /grpo_demo_step4 +ready +vllm/);
    assert.match(l.out, /\(stand-in\)/);
    const stop = await run(['services', 'stop', svc.id], ws);
    assert.equal(stop.code, 0, stop.err);
    serviceId = undefined;
    assert.match((await run(['services', '--all'], ws)).out, /grpo_demo_step4 +stopped/);
    assert.ok(existsSync(join(runs, svc.id, 'cancelled')), 'the runs feature reads it as cancelled');
  });

  it('bad usage exits 2', async () => {
    assert.equal((await run(['merge'], ws)).code, 2);
    assert.equal((await run(['download', 'x'], ws)).code, 2);
    assert.equal((await run(['serve', 'm', '--engine', 'tgi'], ws)).code, 2);
    assert.equal((await run(['checkpoints', '--host', 'nowhere'], ws)).code, 2);
  });
});
