import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import { createRunFolder, prepareRun } from '../../../src/core/runs/submit-run';
import { RUN_FILES } from '../../../src/core/runs/run-record';
import { LocalHost } from '../../../src/core/remote/local-host';
import { cancelRun } from '../../../src/core/runs/cancel-run';
import { useSlurmCluster } from '../fixtures/slurm';
import { adaptExample, makeWorkspace, request, submitRun, waitForState } from './run-fixture';

const host = new LocalHost();

describe('the slurm scheduler on a real single-node Slurm', () => {
  const cluster = useSlurmCluster();

  it('the doctor SFT spec is submitted with sbatch, queued or running in squeue, and succeeds', async () => {
    const ws = makeWorkspace();
    const { spec, text } = adaptExample('doctor-trl-sft.yaml', ws, {
      'resources.partition': 'debug',
      'resources.time': '00:10:00',
      'env.MEDRL_STANDIN_STEP_SECONDS': '0.3',
    });
    assert.equal(spec.scheduler, 'slurm');
    const { record } = await submitRun(request(ws, host, spec, text));
    assert.match(record.jobId ?? '', /^\d+$/);
    const sbatch = readFileSync(join(record.dir, 'job.sbatch'), 'utf8');
    assert.match(sbatch, /^#SBATCH --partition=debug$/m);
    assert.match(sbatch, /^#SBATCH --time=00:10:00$/m);
    const active = await waitForState(host, ws.runsDir, record.id, ['queued', 'running', 'succeeded'], 60_000);
    assert.notEqual(active.state, 'lost');
    const done = await waitForState(host, ws.runsDir, record.id, ['succeeded', 'failed', 'lost'], 60_000);
    assert.equal(done.state, 'succeeded', `${done.reason} ${done.logTail}\n${cluster.logs()}`);
    assert.ok(existsSync(join(record.dir, 'output/checkpoint-4/trainer_state.json')));
  });

  it('a failing job is failed with its exit code; scancel cancels', async () => {
    const ws = makeWorkspace();
    const crash = adaptExample('doctor-trl-grpo.yaml', ws, {
      'resources.partition': 'debug',
      'env.MEDRL_STANDIN_CRASH_AT_STEP': '2',
      'env.MEDRL_STANDIN_EXIT_CODE': '5',
    });
    const a = (await submitRun(request(ws, host, crash.spec, crash.text))).record;
    const failed = await waitForState(host, ws.runsDir, a.id, ['failed', 'succeeded', 'lost'], 60_000);
    assert.equal(failed.state, 'failed', failed.reason);
    assert.equal(failed.exitCode, 5);
    const hang = adaptExample('doctor-trl-grpo.yaml', ws, { 'resources.partition': 'debug', 'env.MEDRL_STANDIN_HANG_AT_STEP': '1' });
    const b = (await submitRun(request(ws, host, hang.spec, hang.text))).record;
    await waitForState(host, ws.runsDir, b.id, ['running'], 60_000);
    await cancelRun(host, b);
    const cancelled = await waitForState(host, ws.runsDir, b.id, ['cancelled', 'failed', 'lost'], 60_000);
    assert.equal(cancelled.state, 'cancelled');
  });

  it("sbatch --test-only accepts the generated scripts: one node, and verl's Ray cluster and TRL's srun over two nodes (run here on the one node there is)", async () => {
    const ws = makeWorkspace();
    const dir = mkdtempSync(join(tmpdir(), 'medrl-sbatch-'));
    const cases: [string, Record<string, unknown>][] = [
      ['doctor-trl-sft.yaml', {}],
      ['ecg-qa-verl-grpo-lora.yaml', { scheduler: 'slurm', 'resources.nodes': 2 }],
      ['doctor-trl-grpo.yaml', { 'resources.nodes': 2 }],
    ];
    for (const [file, changes] of cases) {
      const { spec, text } = adaptExample(file, ws, { 'resources.partition': 'debug', 'resources.time': '00:10:00', ...changes });
      const run = await prepareRun(request(ws, host, spec, text));
      const sbatch = join(dir, `${run.id}.sbatch`);
      writeFileSync(sbatch, run.files[RUN_FILES.sbatch]!);
      const nodes = spec.resources?.nodes ?? 1;
      // This cluster has one node: a two-node script is checked with --nodes=1 on the command line (it wins over #SBATCH).
      const r = spawnSync('sbatch', ['--test-only', ...(nodes > 1 ? ['--nodes=1'] : []), sbatch], { encoding: 'utf8', env: process.env });
      assert.equal(r.status, 0, `${file}: ${r.stderr}`);
      assert.match(r.stderr, /Job \d+ to start at/);
      if (nodes > 1) {
        const refused = spawnSync('sbatch', ['--test-only', sbatch], { encoding: 'utf8', env: process.env });
        assert.notEqual(refused.status, 0, 'two nodes are more than this cluster has');
        assert.match(refused.stderr, /Requested node configuration is not available/);
      }
    }
  });

  it("a two-node TRL job runs launch.sh once per task through srun, with its rank and the head's address (two tasks on the one node here)", async () => {
    const ws = makeWorkspace();
    mkdirSync(join(ws.dir, 'scripts'));
    writeFileSync(
      join(ws.dir, 'scripts/train.py'),
      'import os, sys\nprint("train.py ran with", " ".join(sys.argv[1:3]), "key", len(os.environ.get("MEDRL_JUDGE_API_KEY", "")), flush=True)\n',
    );
    const text = [
      'name: two-node-trl',
      'framework: trl',
      'algorithm: sft',
      'host: local',
      'scheduler: slurm',
      'model: Qwen/Qwen2.5-0.5B',
      'data: { train: data/sft.json }',
      'entry: { script: scripts/train.py }',
      'resources: { nodes: 2, gpusPerNode: 0, partition: debug, time: "00:05:00" }',
      '',
    ].join('\n');
    const spec = parseRunSpec(text, 'two-node.yaml').spec!;
    const run = await prepareRun(request(ws, host, spec, text));
    assert.match(run.files[RUN_FILES.launch]!, /^exec accelerate launch \\\n {2}"\$@" \\$/m);
    assert.ok(await createRunFolder(host, run.record, true));
    for (const [name, content] of Object.entries(run.files)) await host.writeFile(join(run.dir, name), content, { mode: 0o755 });
    // Two tasks on one node stand for two nodes with one task each (the script ranks tasks by SLURM_PROCID); the key
    // reaches every task through sbatch's environment.
    execFileSync(
      'sbatch',
      ['--nodes=1', '--ntasks-per-node=2', `--output=${join(run.dir, 'slurm-%j.out')}`, join(run.dir, RUN_FILES.sbatch)],
      { env: { ...process.env, MEDRL_JUDGE_API_KEY: 'k3y' }, encoding: 'utf8' },
    );
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(run.dir, RUN_FILES.exitCode))) {
      if (Date.now() > deadline) throw new Error(`no exit_code after 60 s\n${cluster.logs()}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    const slurmOut = () => execFileSync('sh', ['-c', `cat ${join(run.dir, 'slurm-')}*.out`], { encoding: 'utf8' });
    assert.equal(readFileSync(join(run.dir, RUN_FILES.exitCode), 'utf8').trim(), '0', slurmOut());
    const node0 = readFileSync(join(run.dir, RUN_FILES.log), 'utf8');
    const node1 = readFileSync(join(run.dir, 'output-node1.log'), 'utf8');
    assert.match(node0, /^medrl: node 0 of 2 on \S+, head \S+:\d+$/m);
    assert.match(node1, /^medrl: node 1 of 2 on \S+, head \S+:\d+$/m);
    for (const log of [node0, node1]) assert.match(log, /train\.py ran with .* key 3$/m);
    assert.match(slurmOut(), /^medrl: nodes \S+; head \S+ \(/m);
  });
});
