import type { RunSpec } from '../runs/run-spec';
import { shellJoin, shellPath, shellQuote } from '../remote/shell-quote';

export type ServiceEngine = 'vllm' | 'sglang' | 'trl-vllm-serve';

/** What to serve and how: the run spec's `services:` entry, a checkpoint, or a model id. */
export interface ServiceLaunch {
  /** The service's name (letters, digits, _): shown in views, and MEDRL_<NAME>_URL for runs. */
  name: string;
  engine: ServiceEngine;
  /** Model path on the host or hub id. */
  model: string;
  servedModelName?: string;
  /** Port on the host; default: a free one. */
  port?: number;
  /** Address to listen on; default 127.0.0.1 (only this machine). */
  bind?: string;
  /** Name other machines reach this host by, when bound beyond loopback; default: `hostname -f` there. */
  address?: string;
  /** CUDA_VISIBLE_DEVICES for the server, e.g. "0,1,2,3". */
  gpus?: string;
  tensorParallel?: number;
  gpuMemoryUtilization?: number;
  /** Extra launcher arguments. */
  args?: string[];
  setup?: string[];
  workdir?: string;
  env?: Record<string, string>;
  /** MedRL's stand-ins folder on the host: used only when the engine is not installed there (the local demo). */
  standins?: string;
}

/** Where a server listens unless told otherwise: reachable from its own machine only. */
export const LOOPBACK = '127.0.0.1';

/** Environment variable that carries the API key into the launch script (handed over stdin, never a file or a command line). */
export const API_KEY_ENV = 'MEDRL_SERVICE_API_KEY';

/**
 * SGLang takes its key only as `--api-key`, which every user of the host could read in the process list. This starts
 * `sglang.launch_server` in the same Python process with the key added to sys.argv from the environment: the
 * process's real command line (/proc/PID/cmdline) never holds it, and the variable is dropped before any child starts.
 */
const SGLANG_WITH_KEY = `import os, runpy, sys; sys.argv += ["--api-key", os.environ.pop("${API_KEY_ENV}")]; runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)`;

/** The launch script of a service. The API key never appears in it, nor on any command line: vLLM reads VLLM_API_KEY, SGLang gets it in-process. */
export function serviceScript(s: ServiceLaunch, port: number, hasApiKey: boolean): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(s.name))
    throw new Error(`service name "${s.name}": use letters, digits and _ (it becomes MEDRL_${s.name.toUpperCase()}_URL)`);
  const served = s.servedModelName ?? s.name;
  const bind = s.bind ?? LOOPBACK;
  const lines: string[] = [
    ...Object.entries(s.env ?? {}).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    ...(s.gpus !== undefined ? [`export CUDA_VISIBLE_DEVICES=${shellQuote(s.gpus)}`] : []),
    ...(s.setup ?? []),
    s.workdir ? `cd ${shellPath(s.workdir)} || exit 1` : '',
  ];
  const standins = s.standins ? shellQuote(s.standins) : undefined;
  let cmd: string;
  switch (s.engine) {
    case 'vllm':
      if (standins) lines.push(`command -v vllm >/dev/null 2>&1 || export PATH=${standins}/bin:"$PATH"`);
      if (hasApiKey) lines.push(`export VLLM_API_KEY="$${API_KEY_ENV}"`);
      cmd = shellJoin([
        'vllm',
        'serve',
        s.model,
        '--host',
        bind,
        '--port',
        String(port),
        '--served-model-name',
        served,
        ...(s.tensorParallel ? ['-tp', String(s.tensorParallel)] : []),
        ...(s.gpuMemoryUtilization ? ['--gpu-memory-utilization', String(s.gpuMemoryUtilization)] : []),
        ...(s.args ?? []),
      ]);
      break;
    case 'sglang':
      if (standins) lines.push(`python3 -c 'import sglang' >/dev/null 2>&1 || export PYTHONPATH=${standins}\${PYTHONPATH:+:$PYTHONPATH}`);
      cmd = shellJoin([
        'python3',
        ...(hasApiKey ? ['-c', SGLANG_WITH_KEY] : ['-m', 'sglang.launch_server']),
        '--model-path',
        s.model,
        '--host',
        bind,
        '--port',
        String(port),
        '--served-model-name',
        served,
        ...(s.tensorParallel ? ['--tp', String(s.tensorParallel)] : []),
        ...(s.gpuMemoryUtilization ? ['--mem-fraction-static', String(s.gpuMemoryUtilization)] : []),
        ...(s.args ?? []),
      ]);
      break;
    case 'trl-vllm-serve':
      if (hasApiKey) throw new Error(`service "${s.name}": trl vllm-serve has no API key; serve without one`);
      if (standins) lines.push(`command -v trl >/dev/null 2>&1 || export PATH=${standins}/bin:"$PATH"`);
      cmd = shellJoin([
        'trl',
        'vllm-serve',
        '--model',
        s.model,
        '--host',
        bind,
        '--port',
        String(port),
        ...(s.tensorParallel ? ['--tensor_parallel_size', String(s.tensorParallel)] : []),
        ...(s.gpuMemoryUtilization ? ['--gpu_memory_utilization', String(s.gpuMemoryUtilization)] : []),
        ...(s.args ?? []),
      ]);
      break;
  }
  lines.push(`exec ${cmd}`);
  return lines.filter((l) => l !== '').join('\n');
}

/** The OpenAI-style paths that say a server is up: TRL's weight-sync server has only /health/. */
export function healthPaths(engine: ServiceEngine): { health: string; models?: string } {
  return engine === 'trl-vllm-serve' ? { health: '/health/' } : { health: '/health', models: '/v1/models' };
}

/**
 * Whether the trainer runs on the service's own machine, where 127.0.0.1 reaches it: the ssh scheduler starts the job on
 * the host itself; slurm and ray run it on other nodes.
 */
export function trainerSharesMachine(serviceHost: string, run: { host: string; scheduler: RunSpec['scheduler'] }): boolean {
  return serviceHost === run.host && (run.scheduler ?? 'ssh') === 'ssh';
}

/**
 * The servers a run spec's `services:` section starts (entries with `judge:` use a medrl.yaml judge instead), each on its
 * host (the service's `host:`, else the run's), bound to 127.0.0.1 when the trainer shares its machine, else 0.0.0.0
 * (unless the spec names `bind:`). `run`: the run's host and scheduler.
 */
export function serviceLaunchesOfSpec(
  spec: Pick<RunSpec, 'services' | 'setup' | 'workdir' | 'env'>,
  run: { host: string; scheduler: RunSpec['scheduler'] },
): { host: string; launch: ServiceLaunch }[] {
  return Object.entries(spec.services ?? {})
    .filter(([, s]) => !s.judge)
    .map(([name, s]) => {
      const host = s.host ?? run.host;
      return {
        host,
        launch: {
          name,
          engine: s.kind,
          model: s.model,
          bind: s.bind ?? (trainerSharesMachine(host, run) ? LOOPBACK : '0.0.0.0'),
          ...(s.address ? { address: s.address } : {}),
          ...(s.gpus !== undefined ? { gpus: (Array.isArray(s.gpus) ? s.gpus : [s.gpus]).join(',') } : {}),
          ...(s.servedModelName ? { servedModelName: s.servedModelName } : {}),
          ...(s.port ? { port: s.port } : {}),
          ...(s.tensorParallel ? { tensorParallel: s.tensorParallel } : {}),
          ...(s.gpuMemoryUtilization ? { gpuMemoryUtilization: s.gpuMemoryUtilization } : {}),
          ...(s.args ? { args: s.args } : {}),
          ...(spec.setup ? { setup: spec.setup } : {}),
          ...(spec.workdir ? { workdir: spec.workdir } : {}),
          ...(spec.env ? { env: spec.env } : {}),
        },
      };
    });
}
