import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import {
  listServices,
  restartService,
  serviceStatus,
  startService,
  stopService,
  waitForService,
  type Service,
  type ServiceStatus,
} from '../../../src/core/services/services';
import { serviceLaunchesOfSpec, serviceScript } from '../../../src/core/services/service-command';
import { execFileSync } from 'node:child_process';
import { HostPool } from '../../../src/core/remote/host-pool';
import { environmentSecrets, resolveRunEnv } from '../../../src/core/submit/run-environment';
import { runSpecSchema } from '../../../src/core/runs/run-spec';
import type { ResolvedHost } from '../../../src/core/config/workspace-config';

const STANDINS = join(__dirname, '../../../standins');

/** The processes of a session (a service's job.sh is its session leader), with their command lines from /proc. */
function processesOfSession(sid: number): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]) !== sid) continue;
      out.push({ pid: Number(pid), cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // ended while we looked
    }
  }
  return out;
}

describe('services on the local host (stand-in vLLM and SGLang servers)', () => {
  const host = new LocalHost();
  const runs = mkdtempSync(join(tmpdir(), 'svc-'));
  const started: Service[] = [];
  after(async () => {
    for (const s of started) await stopService(host, s);
  });

  it('a vLLM service goes from starting to ready, serves its model name, and its API key stays off every command line and log', async () => {
    const key = "sk-test-'quoted' key";
    const svc = await startService(
      host,
      runs,
      {
        name: 'judge',
        engine: 'vllm',
        model: '/models/Qwen2.5-72B-Instruct',
        servedModelName: 'Judger',
        tensorParallel: 8,
        gpuMemoryUtilization: 0.95,
        standins: STANDINS,
      },
      key,
    );
    started.push(svc);
    const states: ServiceStatus[] = [];
    const ready = await waitForService(host, svc, svc.port, {
      apiKey: key,
      pollMs: 200,
      timeoutMs: 30_000,
      onStatus: (s) => states.push(s),
    });
    assert.deepEqual(
      states.map((s) => s.state),
      ['starting', 'ready'],
    );
    assert.deepEqual(ready.models, ['Judger']);
    assert.equal(ready.standIn, true);
    const launch = readFileSync(join(svc.record.dir, 'launch.sh'), 'utf8');
    assert.match(
      launch,
      /vllm serve \/models\/Qwen2\.5-72B-Instruct --host 127\.0\.0\.1 --port \d+ --served-model-name Judger -tp 8 --gpu-memory-utilization 0\.95/,
    );
    for (const f of ['launch.sh', 'run.json', 'output.log'])
      assert.ok(!readFileSync(join(svc.record.dir, f), 'utf8').includes('sk-test'), `${f} has no key`);
    assert.ok(
      !readdirSync(svc.record.dir).some((f) => readFileSync(join(svc.record.dir, f)).includes('sk-test')),
      'no file in the run folder holds the key',
    );
    for (const p of processesOfSession(svc.record.pgid!)) assert.ok(!p.cmdline.includes('sk-test'), `pid ${p.pid}: ${p.cmdline}`);
    // The key is required: without it the server answers 401.
    const unauth = await fetch(`http://127.0.0.1:${svc.port}/v1/models`);
    assert.equal(unauth.status, 401);
    const run = JSON.parse(readFileSync(join(svc.record.dir, 'run.json'), 'utf8'));
    assert.equal(run.kind, 'service');
    assert.deepEqual(
      [run.service.port, run.service.model, run.service.servedModelName],
      [svc.port, '/models/Qwen2.5-72B-Instruct', 'Judger'],
    );
    const listed = await listServices(host, runs);
    assert.ok(listed.some((s) => s.record.id === svc.record.id && s.servedModelName === 'Judger'));
    // A port held by another process group (as if the server had died and someone else took the port): the key is not sent.
    const impostor = await serviceStatus(host, { ...svc, record: { ...svc.record, pgid: 1 } }, svc.port, key);
    assert.equal(impostor.state, 'starting');
    assert.match(impostor.detail ?? '', /is not held by this service \(yet\): its API key is not sent there/);
  });

  it('an SGLang service starts sglang.launch_server and its API key is on no command line of its process tree', async () => {
    const key = 'sk-sglang-7f3a9c';
    const svc = await startService(
      host,
      runs,
      {
        name: 'simulator',
        engine: 'sglang',
        model: 'Henrychur/DiagGym',
        servedModelName: 'EHRGenerator',
        gpuMemoryUtilization: 0.8,
        standins: STANDINS,
      },
      key,
    );
    started.push(svc);
    const s = await waitForService(host, svc, svc.port, { apiKey: key, pollMs: 200, timeoutMs: 30_000 });
    assert.equal(s.state, 'ready');
    assert.deepEqual(s.models, ['EHRGenerator']);
    assert.equal((await fetch(`http://127.0.0.1:${svc.port}/v1/models`)).status, 401, 'the server got the key');
    const launch = readFileSync(join(svc.record.dir, 'launch.sh'), 'utf8');
    assert.match(launch, /runpy\.run_module\("sglang\.launch_server".* --model-path Henrychur\/DiagGym .* --mem-fraction-static 0\.8$/m);
    // Every process of the service's session (job.sh, launch.sh's python, the server it became), as `ps` shows them.
    const tree = processesOfSession(svc.record.pgid!);
    assert.ok(
      tree.some((p) => p.cmdline.includes('openai_server.py')),
      `the stand-in server runs: ${tree.map((p) => p.cmdline).join(' | ')}`,
    );
    for (const p of tree) assert.ok(!p.cmdline.includes(key), `pid ${p.pid} has the key on its command line: ${p.cmdline}`);
  });

  it('a service that dies shows as failed with its log; stop shows stopped; restart is ready again', async () => {
    const first = started[0]!;
    // Same port as a running server: the second one cannot bind and exits.
    const clash = await startService(host, runs, { name: 'clash', engine: 'vllm', model: 'm', port: first.port, standins: STANDINS });
    const s = await waitForService(host, clash, clash.port, { pollMs: 200, timeoutMs: 30_000 });
    assert.equal(s.state, 'failed');
    assert.notEqual(s.exitCode, 0);
    assert.match(s.logTail ?? '', /Address already in use/);
    await stopService(host, first);
    assert.equal((await serviceStatus(host, first, first.port, 'x')).state, 'stopped');
    await assert.rejects(restartService(host, first), /was started with an API key: give it again/);
    const again = await restartService(host, first, "sk-test-'quoted' key");
    started[0] = again;
    const r = await waitForService(host, again, again.port, { apiKey: "sk-test-'quoted' key", pollMs: 200, timeoutMs: 30_000 });
    assert.equal(r.state, 'ready');
  });
});

describe('service launch scripts and run environment', () => {
  it('TRL vllm-serve uses its own flags; names must be env-var safe', () => {
    assert.match(
      serviceScript({ name: 'gen', engine: 'trl-vllm-serve', model: 'Qwen/Qwen2.5-7B', tensorParallel: 2 }, 8000, false),
      /exec trl vllm-serve --model Qwen\/Qwen2\.5-7B --host 127\.0\.0\.1 --port 8000 --tensor_parallel_size 2$/,
    );
    assert.throws(() => serviceScript({ name: 'my judge', engine: 'vllm', model: 'm' }, 1, false), /service name "my judge"/);
    assert.match(
      serviceScript({ name: 'j', engine: 'vllm', model: "a'b", args: ['--max-model-len', '8192'] }, 1, false),
      /'a'\\''b' .*--max-model-len 8192/,
    );
  });

  it("a spec's services become launches; a run gets MEDRL_<NAME>_* at an address the trainer reaches, MEDRL_JUDGE_*, and keys kept apart", async () => {
    const host = new LocalHost();
    const runs = mkdtempSync(join(tmpdir(), 'svc-env-'));
    const local: ResolvedHost = { name: 'local', kind: 'local', runsDir: runs, setup: [], env: {}, scheduler: 'ssh' };
    const pool = new HostPool(() => [local]);
    const spec = runSpecSchema.parse({
      name: 'r',
      framework: 'verl',
      algorithm: 'grpo',
      model: 'm',
      data: { train: 'd' },
      reward: { path: 'r.py' },
      host: 'local',
      services: {
        simulator: { model: 'Henrychur/DiagGym', servedModelName: 'EHRGenerator', tensorParallel: 8 },
        judge: { model: 'x', judge: 'qwen72' },
      },
    });
    const config = {
      judges: { qwen72: { url: 'http://127.0.0.1:8082/v1/', model: 'Judger' } },
      defaults: { host: 'local', scheduler: 'ssh' as const },
    };
    const envOf = (scheduler: 'ssh' | 'slurm') =>
      resolveRunEnv({
        spec,
        specFile: 'spec.yaml',
        config,
        hosts: [local],
        pool,
        run: { host: 'local', scheduler },
        secrets: environmentSecrets({ MEDRL_SIMULATOR_API_KEY: 'sim-key', MEDRL_JUDGE_API_KEY: 'judge-key' }),
      });
    // Not running yet: said at the service's field, before anything is submitted.
    const none = await envOf('ssh');
    assert.deepEqual(
      none.problems!.map((p) => [p.field, p.severity]),
      [['services.simulator', 'error']],
    );
    assert.match(none.problems![0]!.message, /the run needs service "simulator" on local but it is not running/);

    // A service for an ssh run on its own host listens on 127.0.0.1, and the run reaches it there.
    const [sameHost] = serviceLaunchesOfSpec(spec, { host: 'local', scheduler: 'ssh' });
    assert.equal(sameHost!.launch.bind, '127.0.0.1');
    const svc = await startService(host, runs, { ...sameHost!.launch, standins: STANDINS }, 'sim-key');
    try {
      await waitForService(host, svc, svc.port, { apiKey: 'sim-key', pollMs: 200, timeoutMs: 30_000 });
      const e = await envOf('ssh');
      assert.deepEqual(e.problems, []);
      assert.deepEqual(e.vars, {
        MEDRL_SIMULATOR_URL: `http://127.0.0.1:${svc.port}/v1`,
        MEDRL_SIMULATOR_MODEL: 'EHRGenerator',
        MEDRL_JUDGE_URL: 'http://127.0.0.1:8082/v1',
        MEDRL_JUDGE_MODEL: 'Judger',
      });
      assert.deepEqual(e.secrets, { MEDRL_SIMULATOR_API_KEY: 'sim-key', MEDRL_JUDGE_API_KEY: 'judge-key' });
      // A Slurm job runs on a compute node: 127.0.0.1 is not this service there.
      const slurm = await envOf('slurm');
      assert.match(
        slurm.problems!.find((p) => p.field === 'services.simulator')!.message,
        /listens on 127\.0\.0\.1 only, which the trainer \(on local, slurm scheduler\) cannot reach/,
      );
    } finally {
      await stopService(host, svc);
    }

    // Started for a Slurm run, it binds 0.0.0.0 and the run gets the host's name, which really reaches it.
    const [remote] = serviceLaunchesOfSpec(spec, { host: 'local', scheduler: 'slurm' });
    assert.equal(remote!.launch.bind, '0.0.0.0');
    const wide = await startService(host, runs, { ...remote!.launch, standins: STANDINS }, 'sim-key');
    try {
      await waitForService(host, wide, wide.port, { apiKey: 'sim-key', pollMs: 200, timeoutMs: 30_000 });
      const name = execFileSync('sh', ['-c', 'hostname -f 2>/dev/null || hostname'], { encoding: 'utf8' }).trim();
      assert.match(readFileSync(join(wide.record.dir, 'launch.sh'), 'utf8'), /--host 0\.0\.0\.0 /);
      const e = await envOf('slurm');
      assert.equal(e.vars.MEDRL_SIMULATOR_URL, `http://${name}:${wide.port}/v1`);
      const models = await fetch(`${e.vars.MEDRL_SIMULATOR_URL}/models`, {
        headers: { authorization: `Bearer ${e.secrets.MEDRL_SIMULATOR_API_KEY}` },
      });
      assert.equal(models.status, 200, 'the URL the run gets reaches the server');
    } finally {
      await stopService(host, wide);
    }
  });
});
