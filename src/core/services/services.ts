import { z } from 'zod';
import { execChecked, type Host, type PortForward } from '../remote/host';
import type { RunRecord } from '../runs/run-record';
import { launchJob, relaunchJob } from '../runs/launch-job';
import { listRuns, runStatus, type RunInfo } from '../runs/list-runs';
import { cancelRun } from '../runs/cancel-run';
import { API_KEY_ENV, healthPaths, LOOPBACK, serviceScript, type ServiceEngine, type ServiceLaunch } from './service-command';

/** A service: a long-running run (kind "service") with a port, in the host's runs folder, started by the runs launcher. */
export interface Service {
  record: RunRecord;
  name: string;
  engine: ServiceEngine;
  model: string;
  servedModelName: string;
  /** Port on the host. */
  port: number;
}

type ServiceState = 'starting' | 'ready' | 'failed' | 'stopped';

export interface ServiceStatus {
  state: ServiceState;
  /** Model ids /v1/models lists once ready. */
  models?: string[];
  exitCode?: number;
  /** The log's last lines: why a service failed. */
  logTail?: string;
  /** Said by the server (e.g. "503 stand-in server is starting") or the probe. */
  detail?: string;
  /** A stand-in server (no GPU here): it says so in its first log line. */
  standIn?: boolean;
}

function toService(record: RunRecord): Service | undefined {
  const s = record.service;
  if (record.kind !== 'service' || !s) return undefined;
  return {
    record,
    name: s.name ?? record.name,
    engine: s.engine ?? 'vllm',
    model: s.model,
    servedModelName: s.servedModelName ?? s.model,
    port: s.port,
  };
}

/** A free TCP port on the host (the kernel picks it). */
async function freePortOn(host: Host): Promise<number> {
  const r = await execChecked(host, `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'`);
  const port = Number(r.stdout.trim());
  if (!Number.isInteger(port) || port <= 0) throw new Error(`${host.name}: could not find a free port: ${r.stdout}${r.stderr}`);
  return port;
}

/** The host's fully qualified name as it says it (`hostname -f`, else `hostname`): what the other nodes of a cluster resolve. */
async function hostAddress(host: Host): Promise<string> {
  const name = (await execChecked(host, 'hostname -f 2>/dev/null || hostname')).stdout.trim();
  if (!/^[A-Za-z0-9.-]+$/.test(name)) throw new Error(`${host.name}: hostname printed "${name}": give the service an address: in the spec`);
  return name;
}

/** Starts a service as a run on the host. The API key reaches it over stdin as an environment variable, never a file or a command line. */
export async function startService(host: Host, runsDir: string, launch: ServiceLaunch, apiKey?: string): Promise<Service> {
  const port = launch.port ?? (await freePortOn(host));
  const bind = launch.bind ?? LOOPBACK;
  // Bound beyond loopback: record the name other machines reach this host by (a run's MEDRL_<NAME>_URL uses it).
  const address = bind === LOOPBACK ? undefined : (launch.address ?? (await hostAddress(host)));
  const servedModelName = launch.servedModelName ?? launch.name;
  const record = await launchJob(host, {
    runsDir,
    kind: 'service',
    // run.json needs a framework: a service is 'trl' for trl vllm-serve, else 'verl'; the algorithm names the job.
    framework: launch.engine === 'trl-vllm-serve' ? 'trl' : 'verl',
    algorithm: 'serve',
    name: launch.name,
    script: serviceScript(launch, port, apiKey !== undefined),
    service: {
      port,
      model: launch.model,
      servedModelName,
      engine: launch.engine,
      name: launch.name,
      ...(apiKey !== undefined ? { apiKey: true } : {}),
      ...(address ? { bind, address } : {}),
    },
    ...(apiKey !== undefined ? { secrets: { [API_KEY_ENV]: apiKey } } : {}),
  });
  return { record, name: launch.name, engine: launch.engine, model: launch.model, servedModelName, port };
}

/** The services in the host's runs folder, newest first: one round trip. */
export async function listServices(host: Host, runsDir: string): Promise<Service[]> {
  return (await listRuns(host, runsDir)).runs.map((r) => toService(r.record)).filter((s): s is Service => s !== undefined);
}

/** Asks a server over HTTP whether it is up: /health, then /v1/models (with the key). */
export async function probeServer(
  baseUrl: string,
  engine: ServiceEngine,
  apiKey?: string,
  timeoutMs = 3000,
): Promise<{ ready: boolean; models?: string[]; detail: string }> {
  const paths = healthPaths(engine);
  const get = (path: string) =>
    fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(timeoutMs), headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  let res: Response;
  try {
    res = await get(paths.health);
  } catch (err) {
    return {
      ready: false,
      detail: `not answering yet (${(err as Error).cause ? String(((err as Error).cause as Error).message ?? (err as Error).cause) : (err as Error).message})`,
    };
  }
  if (!res.ok) return { ready: false, detail: `${paths.health}: HTTP ${res.status} ${await res.text().then((t) => t.slice(0, 200))}` };
  await res.body?.cancel();
  if (!paths.models) return { ready: true, detail: `${paths.health}: HTTP 200` };
  const models = await get(paths.models);
  const body = await models.text();
  if (!models.ok) return { ready: false, detail: `${paths.models}: HTTP ${models.status} ${body.slice(0, 200)}` };
  const parsed = z.object({ data: z.array(z.object({ id: z.string() })) }).safeParse(JSON.parse(body));
  if (!parsed.success) return { ready: false, detail: `${paths.models}: not an OpenAI model list: ${body.slice(0, 200)}` };
  return { ready: true, models: parsed.data.data.map((m) => m.id), detail: `${paths.models}: ${parsed.data.data.length} model(s)` };
}

/** The last lines of a run's log tail. */
function lastLines(run: RunInfo, n: number): string {
  return run.logTail
    .split('\n')
    .slice(-n - 1)
    .join('\n');
}

/**
 * Whether the process listening on the service's port is in the service's process group, so a probe never hands the
 * API key to a process someone else started on that port. `ss -p` names the owner only of one's own sockets; a host
 * without `ss` cannot tell, and is trusted as before.
 */
async function holdsPort(host: Host, svc: Service): Promise<boolean> {
  if (svc.record.pgid === undefined) return true;
  const r = await execChecked(
    host,
    `command -v ss > /dev/null || { echo no-ss; exit 0; }; for p in $(ss -Hltnp 'sport = :${svc.port}' | grep -o 'pid=[0-9]*' | cut -d= -f2); do ps -o pgid= -p "$p"; done`,
  );
  if (r.stdout.trim() === 'no-ss') return true;
  return r.stdout.split(/\s+/).includes(String(svc.record.pgid));
}

/** The service's state: its run on the host (one round trip) and, while it runs, its HTTP health through `localPort`. */
export async function serviceStatus(host: Host, svc: Service, localPort: number | undefined, apiKey?: string): Promise<ServiceStatus> {
  let run = await runStatus(host, svc.record);
  if (run.state === 'lost') {
    // Gone without an exit code: look once more before calling it failed (job.sh may be writing exit_code).
    await new Promise((r) => setTimeout(r, 500));
    run = await runStatus(host, svc.record);
  }
  const logTail = lastLines(run, 30);
  const standIn = /STAND-IN/.test(run.logTail.split('\n').slice(0, 3).join('\n')) || undefined;
  const exit = run.exitCode !== undefined ? { exitCode: run.exitCode } : {};
  if (run.state === 'cancelled') return { state: 'stopped', logTail, ...exit };
  if (run.state === 'succeeded' || run.state === 'failed' || run.state === 'lost') {
    return {
      state: 'failed',
      logTail,
      detail: run.exitCode !== undefined ? `exited with code ${run.exitCode}` : (run.reason ?? 'its process is gone'),
      ...exit,
      ...(standIn ? { standIn } : {}),
    };
  }
  if (localPort === undefined) return { state: 'starting', detail: 'no port forward yet', ...(standIn ? { standIn } : {}) };
  if (apiKey !== undefined && !(await holdsPort(host, svc)))
    return {
      state: 'starting',
      detail: `port ${svc.port} is not held by this service (yet): its API key is not sent there`,
      ...(standIn ? { standIn } : {}),
    };
  const p = await probeServer(`http://127.0.0.1:${localPort}`, svc.engine, apiKey);
  return {
    state: p.ready ? 'ready' : 'starting',
    detail: p.detail,
    ...(p.models ? { models: p.models } : {}),
    ...(standIn ? { standIn } : {}),
  };
}

/** A service's port forwarded to this machine over the host's connection (local host: the same port). */
export function forwardService(host: Host, svc: Service): Promise<PortForward> {
  return host.forwardPort(svc.port, '127.0.0.1');
}

/**
 * Polls until the service is ready or has failed (starting → ready, or → failed with its log tail); each state change
 * is reported. Rejects on timeout with the last detail and the log tail.
 */
export async function waitForService(
  host: Host,
  svc: Service,
  localPort: number,
  o: { apiKey?: string; timeoutMs?: number; pollMs?: number; signal?: AbortSignal; onStatus?: (s: ServiceStatus) => void } = {},
): Promise<ServiceStatus> {
  const deadline = Date.now() + (o.timeoutMs ?? 600_000);
  let last: ServiceState | undefined;
  for (;;) {
    o.signal?.throwIfAborted();
    const s = await serviceStatus(host, svc, localPort, o.apiKey);
    if (s.state !== last) o.onStatus?.(s);
    last = s.state;
    if (s.state !== 'starting') return s;
    if (Date.now() > deadline) {
      const tail = lastLines(await runStatus(host, svc.record), 20);
      throw new Error(
        `${host.name}: service ${svc.name} is not ready after ${Math.round((o.timeoutMs ?? 600_000) / 1000)} s (${s.detail ?? 'starting'}); log ${svc.record.dir}/output.log:\n${tail}`,
      );
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 500));
  }
}

/** Stops the service's whole process group; the run reads as cancelled (the service as stopped). */
export async function stopService(host: Host, svc: Service): Promise<void> {
  await cancelRun(host, svc.record);
}

/**
 * Stops and starts the service again in the same run folder, with the same port and model. The key is not kept on the
 * host, so a service started with one needs it again.
 */
export async function restartService(host: Host, svc: Service, apiKey?: string): Promise<Service> {
  if (svc.record.service?.apiKey && apiKey === undefined)
    throw new Error(`service ${svc.name} was started with an API key: give it again to restart (it is kept only where it was started)`);
  if ((await runStatus(host, svc.record)).state === 'running') await stopService(host, svc);
  return { ...svc, record: await relaunchJob(host, svc.record, apiKey !== undefined ? { [API_KEY_ENV]: apiKey } : {}) };
}
