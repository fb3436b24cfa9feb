import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAppsQuery, parseGpuQuery } from '../../../src/core/remote/nvidia-smi';
import { hostStatusScript, parseHostStatus } from '../../../src/core/runs/host-status';
import { envWarnings } from '../../../src/core/remote/env-check';
import { LocalHost } from '../../../src/core/remote/local-host';
import { DEAD_PID, writeRunFolder } from '../../fixtures/run-folders';

const DATA = join(__dirname, '../../fixtures/nvidia-smi');
const read = (f: string) => readFileSync(join(DATA, f), 'utf8');

describe('nvidia-smi output (real captures from H100 and H200 machines)', () => {
  it('H200 x2 under load: both GPUs with memory, utilisation, power, driver, and a python3 process on each', () => {
    const { gpus, problems } = parseGpuQuery(read('h200-x2/query-gpu.csv'));
    assert.deepEqual(problems, []);
    assert.deepEqual(
      gpus.map((g) => [g.index, g.name, g.memoryUsedMiB, g.memoryTotalMiB, g.utilizationPercent, g.powerW, g.driverVersion]),
      [
        [0, 'NVIDIA H200', 6735, 143771, 100, 693.39, '580.159.04'],
        [1, 'NVIDIA H200', 12457, 143771, 100, 693.79, '580.159.04'],
      ],
    );
    const apps = parseAppsQuery(read('h200-x2/query-apps.csv'));
    assert.deepEqual(
      apps.processes.map((p) => [p.pid, p.name, p.usedMemoryMiB, p.gpuUuid === gpus[p.pid - 540]!.uuid]),
      [
        [540, 'python3', 6726, true],
        [541, 'python3', 12448, true],
      ],
    );
  });

  it('H100 idle, and the --format=csv variant with a header and units', () => {
    const idle = parseGpuQuery(read('h100-x1/query-gpu-idle.csv')).gpus[0]!;
    assert.equal(idle.name, 'NVIDIA H100 80GB HBM3');
    assert.equal(idle.memoryUsedMiB, 0);
    assert.equal(idle.utilizationPercent, 1);
    const header = read('h100-x1/query-gpu-with-header.csv');
    // That capture has 5 columns (index, name, memory.used, memory.total, utilization.gpu): reported, not guessed at.
    const r = parseGpuQuery(header, 'query-gpu-with-header.csv');
    assert.equal(r.gpus.length, 0);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]!.message, /expected 9 comma-separated values, got 5/);
    assert.equal(r.problems[0]!.line, 2);
  });

  it('bad output: a garbled line is reported with its line, the good lines are kept, [N/A] is unknown', () => {
    const text = `${read('h200-x2/query-gpu.csv').trim().split('\n')[0]}\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\n1, GPU-x, NVIDIA H200, [N/A], 143771, [Not Supported], 40, [N/A], 580.159.04\n`;
    const { gpus, problems } = parseGpuQuery(text, 'gpu.csv');
    assert.deepEqual(
      gpus.map((g) => [g.index, g.memoryUsedMiB, g.utilizationPercent]),
      [
        [0, 6735, 100],
        [1, undefined, undefined],
      ],
    );
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.line, 2);
    assert.equal(problems[0]!.file, 'gpu.csv');
  });
});

describe('host status in one script', () => {
  it('runs on a real shell: GPUs from the stand-in nvidia-smi, df of the runs folder, active runs as the Runs view sees them', async () => {
    const host = new LocalHost();
    const runs = (await host.exec('mktemp -d')).stdout.trim();
    writeRunFolder(runs, 'r1', { pid: process.pid });
    writeRunFolder(runs, 'r2', { pid: process.pid, exitCode: 0 });
    writeRunFolder(runs, 'r3', { pid: DEAD_PID }); // killed without a trace: lost, not active
    mkdirSync(join(runs, 'not-a-run')); // no run.json and no submit's marker: not a run, but never hidden
    const script = hostStatusScript({ runsDir: runs, setup: [], env: { PATH: `${join(DATA, 'standin')}:${process.env.PATH}` } });
    const r = await host.exec(script);
    const s = parseHostStatus(r.stdout, 'local: status', { name: 'local', runsDir: runs });
    assert.deepEqual(
      s.problems.map((p) => `${p.file}: ${p.message}`),
      [
        `${join(runs, 'not-a-run')}: a folder without run.json that no submit made here (it holds no .medrl-run marker with this user's token): not a run; left as it is`,
      ],
    );
    assert.equal(s.gpus.length, 2);
    assert.equal(s.processes.length, 2);
    assert.deepEqual(s.activeRuns, ['r1']);
    assert.equal(s.runCount, 3);
    assert.equal(s.disk?.path, runs);
    assert.ok(s.disk!.availableBytes > 0 && s.disk!.totalBytes >= s.disk!.availableBytes);
    assert.equal(host.stats().roundTrips, 2, 'mktemp, then the whole status in one command');
    await host.remove(runs);
  });

  it('no nvidia-smi and no runs folder yet: says why there are no GPUs, df of the parent', async () => {
    const host = new LocalHost();
    const r = await host.exec(hostStatusScript({ runsDir: '/tmp/medrl-no-such-dir/runs', setup: [], env: { PATH: '/usr/bin:/bin' } }));
    const s = parseHostStatus(r.stdout, 'status', { name: 'local', runsDir: '/tmp/medrl-no-such-dir/runs' });
    assert.match(s.gpuError ?? '', /nvidia-smi not found/);
    assert.equal(s.disk?.path, '/tmp');
    assert.equal(s.runCount, 0);
  });

  it('cut-off output is reported, not silently empty', () => {
    const s = parseHostStatus('\x1emedrl:gpus\n', 'gpu1: status', { name: 'gpu1', runsDir: '~/runs' });
    assert.ok(s.problems.some((p) => /stopped early/.test(p.message)));
  });
});

describe('known bad environment combinations', () => {
  it('vLLM 0.8.4 with verl (LoRA), and a vLLM/torch mismatch from the pin table', () => {
    const w = envWarnings({ python: '3.11', gpuCount: 8, packages: { vllm: '0.8.4', torch: '2.6.0+cu124', verl: '0.4.0' } });
    assert.equal(w.length, 1);
    assert.match(w[0]!, /LoRALRUCache has no _LRUCache__update/);
    const m = envWarnings({ python: '3.11', gpuCount: 8, packages: { vllm: '0.10.0', torch: '2.6.0', trl: '0.19.0' } });
    assert.deepEqual(m, [
      "vLLM 0.10.0 is built for torch 2.7.1, but torch 2.6.0 is installed: vLLM's kernels will fail to load. Install torch==2.7.1 or the vLLM release built for torch 2.6.0.",
    ]);
    assert.deepEqual(envWarnings({ python: '3.11', gpuCount: 8, packages: { vllm: '0.8.5.post1', torch: '2.6.0', verl: '0.4.1' } }), []);
  });
});
