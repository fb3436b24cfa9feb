import { join, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import { UsageError, printJson, printLines, type Command, type CommandContext } from '../command';
import {
  forwardService,
  listServices,
  restartService,
  serviceStatus,
  startService,
  stopService,
  waitForService,
  type Service,
} from '../../core/services/services';
import { serviceLaunchesOfSpec, type ServiceEngine, type ServiceLaunch } from '../../core/services/service-command';
import { resolveServeTarget, serviceNameOf } from '../../core/services/serve-target';
import { loadYamlWithSchema } from '../../core/config/yaml-document';
import { runSpecSchema } from '../../core/runs/run-spec';
import { packageRoot } from '../../core/package-root';
import type { HostPool } from '../../core/remote/host-pool';
import type { ResolvedHost } from '../../core/config/workspace-config';
import { pickHost, openWorkspaceHosts } from './workspace-hosts';
import { requireTrust } from '../workspace-trust';

const ENGINES: ServiceEngine[] = ['vllm', 'sglang', 'trl-vllm-serve'];

function numberOption(ctx: CommandContext, name: string, int = true): number | undefined {
  const v = ctx.values[name] as string | undefined;
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (int && !Number.isInteger(n))) throw new UsageError(`--${name} takes a number, not "${v}"`);
  return n;
}

function apiKeyOption(ctx: CommandContext): string | undefined {
  const name = ctx.values['api-key-env'] as string | undefined;
  if (!name) return undefined;
  const key = process.env[name];
  if (!key) throw new UsageError(`--api-key-env ${name}: the environment variable is not set`);
  return key;
}

async function serveAndWait(
  ctx: CommandContext,
  pool: HostPool,
  h: ResolvedHost,
  launch: ServiceLaunch,
  apiKey: string | undefined,
): Promise<Record<string, unknown>> {
  const host = await pool.get(h.name);
  const svc = await startService(host, h.runsDir, launch, apiKey);
  ctx.stderr.write(
    `${h.name}: started ${launch.engine} service ${svc.name} (${svc.model}) on port ${svc.port}; log ${svc.record.dir}/output.log\n`,
  );
  const info = {
    host: h.name,
    id: svc.record.id,
    name: svc.name,
    model: svc.model,
    servedModelName: svc.servedModelName,
    port: svc.port,
    url: `http://127.0.0.1:${svc.port}/v1`,
  };
  if (ctx.values['no-wait']) return { ...info, state: 'starting' };
  const fwd = await forwardService(host, svc);
  try {
    const s = await waitForService(host, svc, fwd.localPort, {
      apiKey,
      onStatus: (st) => ctx.stderr.write(`${svc.name}: ${st.state}${st.detail ? ` (${st.detail})` : ''}\n`),
    });
    if (s.state !== 'ready')
      throw new Error(
        `${h.name}: service ${svc.name} ${s.state}${s.detail ? ` (${s.detail})` : ''}; log ${svc.record.dir}/output.log:\n${s.logTail ?? ''}`,
      );
    return { ...info, state: s.state, models: s.models };
  } finally {
    await fwd.close();
  }
}

export const serveCommand: Command = {
  path: ['serve'],
  summary: "Serve a checkpoint, a model or a run spec's services with vLLM, SGLang or trl vllm-serve on a host",
  usage:
    'medrl serve (CHECKPOINT|MODEL | --spec FILE) [--engine vllm|sglang|trl-vllm-serve] [--name N] [--served-model-name N] [--port P] [--tp N] [--gpu-memory-utilization X] [--api-key-env VAR] [--step N] [--host H] [--standins] [--no-wait] [--json]',
  details:
    "CHECKPOINT: a run id or a run/checkpoint folder on the host (its HuggingFace folder is served; merge verl shards first).\nMODEL: a hub id or model folder. --spec FILE starts every server under the spec's services: (not those that name a judge).\nThe API key is read from the environment variable named by --api-key-env and reaches the server as an environment variable over stdin, never a file or a command line.\nWaits until /v1/models answers (starting → ready), or prints the log when the server fails.\n--standins: when the engine is not installed on the host, use MedRL Studio's stand-in servers (no GPU; for the demo and tests).",
  options: {
    host: { type: 'string' },
    config: { type: 'string', short: 'c' },
    spec: { type: 'string' },
    engine: { type: 'string' },
    name: { type: 'string' },
    'served-model-name': { type: 'string' },
    port: { type: 'string' },
    tp: { type: 'string' },
    'gpu-memory-utilization': { type: 'string' },
    'api-key-env': { type: 'string' },
    step: { type: 'string' },
    standins: { type: 'boolean' },
    'no-wait': { type: 'boolean' },
  },
  async run(ctx) {
    const specFile = ctx.values.spec as string | undefined;
    if (specFile ? ctx.positionals.length !== 0 : ctx.positionals.length !== 1)
      throw new UsageError('give one CHECKPOINT or MODEL, or --spec FILE');
    const engine = (ctx.values.engine as string | undefined) ?? 'vllm';
    if (!ENGINES.includes(engine as ServiceEngine)) throw new UsageError(`--engine is one of ${ENGINES.join(', ')}`);
    const apiKey = apiKeyOption(ctx);
    const standins = ctx.values.standins ? join(packageRoot(__dirname), 'standins') : undefined;
    const { file, config, pool, hosts } = await openWorkspaceHosts(ctx);
    try {
      await requireTrust(file, 'medrl serve');
      const results = [];
      if (specFile) {
        const path = resolve(ctx.cwd, specFile);
        const spec = loadYamlWithSchema(await readFile(path, 'utf8'), runSpecSchema, path);
        const runHost = pickHost(hosts, config, (ctx.values.host as string | undefined) ?? spec.host);
        const launches = serviceLaunchesOfSpec(spec, { host: runHost.name, scheduler: spec.scheduler ?? runHost.scheduler });
        if (!launches.length) throw new UsageError(`${path}: the spec has no services to start (services: entries without judge:)`);
        for (const l of launches) {
          const h = pickHost(hosts, config, l.host);
          results.push(await serveAndWait(ctx, pool, h, { ...l.launch, ...(standins ? { standins } : {}) }, apiKey));
        }
      } else {
        const h = pickHost(hosts, config, ctx.values.host as string | undefined);
        const host = await pool.get(h.name);
        const step = numberOption(ctx, 'step');
        const target = await resolveServeTarget(host, h.runsDir, ctx.positionals[0]!, step);
        const name = (ctx.values.name as string | undefined) ?? target.name;
        results.push(
          await serveAndWait(
            ctx,
            pool,
            h,
            {
              name: serviceNameOf(name),
              engine: engine as ServiceEngine,
              model: target.model,
              servedModelName: (ctx.values['served-model-name'] as string | undefined) ?? name,
              port: numberOption(ctx, 'port'),
              tensorParallel: numberOption(ctx, 'tp'),
              gpuMemoryUtilization: numberOption(ctx, 'gpu-memory-utilization', false),
              setup: h.setup,
              env: h.env,
              ...(h.workdir ? { workdir: h.workdir } : {}),
              ...(standins ? { standins } : {}),
            },
            apiKey,
          ),
        );
      }
      if (ctx.json) printJson(ctx, results);
      else
        printLines(
          ctx,
          results.map(
            (r) =>
              `${String(r.name)}  ${String(r.state)}  ${String(r.url)} (on ${String(r.host)})  model ${String(r.servedModelName)}  run ${String(r.id)}`,
          ),
        );
      return 0;
    } finally {
      await pool.dispose();
    }
  },
};

async function servicesOn(ctx: CommandContext): Promise<{ file?: string; pool: HostPool; found: { h: ResolvedHost; svc: Service }[] }> {
  const { file, config, pool, hosts } = await openWorkspaceHosts(ctx);
  const targets = ctx.values.host ? [pickHost(hosts, config, ctx.values.host as string)] : hosts;
  const found: { h: ResolvedHost; svc: Service }[] = [];
  for (const h of targets) for (const svc of await listServices(await pool.get(h.name), h.runsDir)) found.push({ h, svc });
  return { file, pool, found };
}

export const servicesListCommand: Command = {
  path: ['services'],
  summary: 'List the services (model servers) on the hosts with their state',
  usage: 'medrl services [--host H] [--all] [--api-key-env VAR] [--json]',
  details: 'State: starting, ready (answers /v1/models), failed (with its log), stopped. --all also lists stopped and failed ones.',
  options: {
    host: { type: 'string' },
    config: { type: 'string', short: 'c' },
    all: { type: 'boolean' },
    'api-key-env': { type: 'string' },
  },
  async run(ctx) {
    if (ctx.positionals.length) throw new UsageError('no arguments: medrl services stop|restart ID acts on one');
    const apiKey = apiKeyOption(ctx);
    const { pool, found } = await servicesOn(ctx);
    try {
      const rows = [];
      for (const { h, svc } of found) {
        const host = await pool.get(h.name);
        const fwd = await forwardService(host, svc);
        try {
          const s = await serviceStatus(host, svc, fwd.localPort, apiKey);
          if (!ctx.values.all && (s.state === 'stopped' || s.state === 'failed')) continue;
          rows.push({
            host: h.name,
            id: svc.record.id,
            name: svc.name,
            engine: svc.engine,
            model: svc.model,
            servedModelName: svc.servedModelName,
            port: svc.port,
            ...s,
          });
        } finally {
          await fwd.close();
        }
      }
      if (ctx.json) printJson(ctx, rows);
      else
        printLines(
          ctx,
          rows.length
            ? rows.map(
                (r) =>
                  `${r.host}  ${r.name.padEnd(20)} ${r.state.padEnd(8)} ${r.engine.padEnd(8)} :${r.port}  ${r.servedModelName}${r.standIn ? ' (stand-in)' : ''}  ${r.id}`,
              )
            : ['no services running'],
        );
      return 0;
    } finally {
      await pool.dispose();
    }
  },
};

function serviceAction(verb: 'stop' | 'restart'): Command {
  return {
    path: ['services', verb],
    summary: verb === 'stop' ? 'Stop a service (its whole process group)' : 'Restart a service in its run folder (same port and model)',
    usage: `medrl services ${verb} ID [--host H]${verb === 'restart' ? ' [--api-key-env VAR]' : ''} [--json]`,
    ...(verb === 'restart'
      ? { details: 'A service started with an API key needs it again (--api-key-env VAR): the key is never stored on the host.' }
      : {}),
    options: {
      host: { type: 'string' },
      config: { type: 'string', short: 'c' },
      ...(verb === 'restart' ? { 'api-key-env': { type: 'string' as const } } : {}),
    },
    async run(ctx) {
      if (ctx.positionals.length !== 1) throw new UsageError("give the service's run ID (medrl services --all lists them)");
      const { file, pool, found } = await servicesOn(ctx);
      try {
        // A restart runs the service's launch script again, from a run folder under the workspace's runsDir.
        if (verb === 'restart') await requireTrust(file, 'medrl services restart');
        const id = ctx.positionals[0]!;
        const hit = found.find((f) => f.svc.record.id === id);
        if (!hit) throw new Error(`no service with run id "${id}" on ${ctx.values.host ? String(ctx.values.host) : 'the hosts'}`);
        const host = await pool.get(hit.h.name);
        if (verb === 'stop') await stopService(host, hit.svc);
        else await restartService(host, hit.svc, apiKeyOption(ctx));
        if (ctx.json) printJson(ctx, { host: hit.h.name, id, action: verb });
        else printLines(ctx, [`${hit.h.name}: ${verb === 'stop' ? 'stopped' : 'restarted'} ${hit.svc.name} (${id})`]);
        return 0;
      } finally {
        await pool.dispose();
      }
    },
  };
}

export const servicesStopCommand = serviceAction('stop');
export const servicesRestartCommand = serviceAction('restart');
