import { errorMessage, type Problem } from '../errors/located-error';
import type { ResolvedHost, WorkspaceConfig } from '../config/workspace-config';
import type { HostPool } from '../remote/host-pool';
import type { Host } from '../remote/host';
import { listServices, serviceStatus, type Service } from '../services/services';
import { LOOPBACK, trainerSharesMachine } from '../services/service-command';
import type { RunEnv } from '../runs/launch-script';
import type { RunSpec } from '../runs/run-spec';
import { RAY_NO_SECRETS } from '../runs/ray-scheduler';
import { publicUrl, sha256, type JudgeUse, type ServiceUse } from '../runs/provenance';
import { DEFAULT_JUDGE_PARSE, DEFAULT_JUDGE_PROMPT } from '../judge/judge-scorer';

/** Tokens a run gets as secrets when the user has one: Hugging Face (gated models, uploads) and W&B (with spec.wandb). */
export type TokenName = 'HF_TOKEN' | 'WANDB_API_KEY';

/**
 * Where a run's secret values come from: the extension's is VS Code SecretStorage, the CLI's the user's own
 * environment (variables already exported in the shell). Never argv, never a file. `envName` is the variable the run
 * gets (MEDRL_JUDGE_API_KEY, MEDRL_<NAME>_API_KEY).
 */
export interface SecretSource {
  judgeKey(judge: string, envName: string): Promise<string | undefined>;
  serviceKey(svc: Service, envName: string): Promise<string | undefined>;
  token(name: TokenName): Promise<string | undefined>;
  /** How the user gives this secret, for a problem that says it is missing. */
  howToSet(what: { judge: string } | { token: TokenName } | { service: string }, envName: string): string;
}

/** The CLI's secrets: the variable the run would get, as exported in the user's shell (`export MEDRL_JUDGE_API_KEY=...`). */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env): SecretSource {
  const get = (name: string) => Promise.resolve(env[name] || undefined);
  return {
    judgeKey: (_judge, envName) => get(envName),
    serviceKey: (_svc, envName) => get(envName),
    token: (name) => get(name),
    howToSet: (_what, envName) => `export ${envName} in the shell that runs medrl`,
  };
}

/** A server as a run reaches it: base URL ending in /v1, the model name to ask for, and its key if it has one. */
interface Endpoint {
  url: string;
  model: string;
  apiKey?: string;
  /** What the run's provenance.json records of it (never the key). */
  use: { service: ServiceUse } | { judge: JudgeUse };
}

export interface RunEnvRequest {
  spec: RunSpec;
  /** The spec's file, for problem locations. */
  specFile: string;
  config: Pick<WorkspaceConfig, 'judges' | 'defaults'>;
  /** The workspace's hosts (a service may run on another one than the run). */
  hosts: ResolvedHost[];
  pool: HostPool;
  /** The host the run is submitted to, and its scheduler (the spec's, else the host's). */
  run: { host: string; scheduler: NonNullable<RunSpec['scheduler']> };
  secrets: SecretSource;
}

const isLoopback = (h: string) => h === 'localhost' || h === '::1' || h === '[::1]' || h.startsWith('127.');

/**
 * The environment a run gets from outside its spec, the same from `medrl submit` and from the extension:
 * - each entry of the spec's `services:`: MEDRL_<NAME>_URL/_MODEL (and MEDRL_<NAME>_API_KEY, a secret) of the newest
 *   running service of that name on its host, or, for `judge: J`, of medrl.yaml's judge J. The URL is one the trainer
 *   can reach: 127.0.0.1 when it runs on the service's machine, else the address the service's host recorded;
 * - MEDRL_JUDGE_*: the spec's service named `judge` if any, else medrl.yaml's `defaults.judge`, else its only judge;
 * - HF_TOKEN when the user has one, WANDB_API_KEY when the spec logs to W&B (`wandb:`), as secrets.
 * What the run cannot get is a problem located at its spec field, shown by --dry-run and refusing submit when an error.
 */
export async function resolveRunEnv(req: RunEnvRequest): Promise<RunEnv> {
  const { spec, config, secrets } = req;
  const out: Required<RunEnv> = { vars: {}, secrets: {}, problems: [], uses: { services: {}, judges: {} } };
  const problem = (field: string, severity: Problem['severity'], message: string) =>
    out.problems.push({ file: req.specFile, field, severity, message });
  const put = (name: string, e: Endpoint) => {
    const n = name.toUpperCase();
    out.vars[`MEDRL_${n}_URL`] = e.url;
    out.vars[`MEDRL_${n}_MODEL`] = e.model;
    if (e.apiKey) out.secrets[`MEDRL_${n}_API_KEY`] = e.apiKey;
    if ('judge' in e.use) out.uses.judges[name] = e.use.judge;
    else out.uses.services[name] = e.use.service;
  };
  const judgeEndpoint = async (service: string, judge: string, field: string): Promise<Endpoint | undefined> => {
    const j = config.judges[judge];
    if (!j) {
      problem(field, 'error', `unknown judge "${judge}": add it under judges in medrl.yaml`);
      return undefined;
    }
    const envName = `MEDRL_${service.toUpperCase()}_API_KEY`;
    const key = await secrets.judgeKey(judge, envName);
    if (!key)
      problem(
        field,
        'warning',
        `judge "${judge}" has no API key here: the run calls it without one (${secrets.howToSet({ judge }, envName)} if it needs one)`,
      );
    // medrl.yaml's url is as the judge's own host sees it (`host:`, else this machine).
    if (isLoopback(new URL(j.url).hostname) && !trainerSharesMachine(j.host ?? 'local', req.run)) {
      problem(
        field,
        'warning',
        `judge "${judge}" is at ${j.url} on ${j.host ?? 'this machine'}, which the trainer (on ${req.run.host}, ${req.run.scheduler} scheduler) cannot reach at that address: give judges.${judge}.url in medrl.yaml an address the run's nodes can reach`,
      );
    }
    const url = j.url.replace(/\/+$/, '');
    const use: JudgeUse = {
      judge,
      host: j.host ?? null,
      model: j.model,
      url: publicUrl(url),
      promptSha256: sha256(j.prompt ?? DEFAULT_JUDGE_PROMPT),
      parser: j.parse ?? DEFAULT_JUDGE_PARSE,
      temperature: j.temperature ?? null,
      seed: j.seed ?? null,
      maxTokens: j.maxTokens ?? null,
    };
    return { url, model: j.model, ...(key ? { apiKey: key } : {}), use: { judge: use } };
  };

  for (const [name, s] of Object.entries(spec.services ?? {})) {
    const field = `services.${name}`;
    const e = s.judge
      ? await judgeEndpoint(name, s.judge, `${field}.judge`)
      : await runningService(req, name, s.host ?? req.run.host, field, problem);
    if (e) put(name, e);
  }
  if (!out.vars.MEDRL_JUDGE_URL) {
    const names = Object.keys(config.judges);
    const judge = config.defaults.judge ?? (names.length === 1 ? names[0] : undefined);
    const e = judge ? await judgeEndpoint('judge', judge, 'services') : undefined;
    if (e) put('judge', e);
  }

  const hf = await secrets.token('HF_TOKEN');
  if (hf) out.secrets.HF_TOKEN = hf;
  if (spec.wandb) {
    const key = await secrets.token('WANDB_API_KEY');
    if (key) out.secrets.WANDB_API_KEY = key;
    else
      problem(
        'wandb',
        'error',
        `the run logs to W&B but there is no W&B API key: ${secrets.howToSet({ token: 'WANDB_API_KEY' }, 'WANDB_API_KEY')}`,
      );
  }

  if (req.run.scheduler === 'ray') {
    // A Ray job gets no secrets (ray-scheduler.ts says why): an optional token stays behind, a needed key refuses.
    for (const k of Object.keys(out.secrets)) {
      if (k === 'HF_TOKEN') problem('scheduler', 'warning', `HF_TOKEN is not passed to the run: ${RAY_NO_SECRETS}`);
      else problem(k === 'WANDB_API_KEY' ? 'wandb' : 'services', 'error', `${k} cannot reach the run: ${RAY_NO_SECRETS}`);
    }
    out.secrets = {};
  }
  return out;
}

/** The newest running service of this name on its host, as the trainer reaches it; a problem when there is none. */
async function runningService(
  req: RunEnvRequest,
  name: string,
  hostName: string,
  field: string,
  problem: (field: string, severity: Problem['severity'], message: string) => void,
): Promise<Endpoint | undefined> {
  const h = req.hosts.find((x) => x.name === hostName);
  if (!h) {
    problem(`${field}.host`, 'error', `unknown host "${hostName}": add it under hosts in medrl.yaml`);
    return undefined;
  }
  let host: Host;
  let services: Awaited<ReturnType<typeof listServices>>;
  try {
    host = await req.pool.get(h.name);
    services = await listServices(host, h.runsDir);
  } catch (err) {
    // A dry run still shows the launch script and every other problem when the service's host cannot be reached.
    problem(`${field}.host`, 'error', `cannot look for service "${name}" on ${hostName}: ${errorMessage(err)}`);
    return undefined;
  }
  for (const svc of services) {
    if (svc.name !== name) continue;
    const st = await serviceStatus(host, svc, undefined);
    if (st.state === 'failed' || st.state === 'stopped') continue;
    const envName = `MEDRL_${name.toUpperCase()}_API_KEY`;
    const key = svc.record.service?.apiKey ? await req.secrets.serviceKey(svc, envName) : undefined;
    if (svc.record.service?.apiKey && !key)
      problem(
        field,
        'error',
        `service "${name}" on ${hostName} was started with an API key that is not here: ${req.secrets.howToSet({ service: name }, envName)}`,
      );
    const bind = svc.record.service?.bind ?? LOOPBACK;
    let at = LOOPBACK;
    if (!trainerSharesMachine(hostName, req.run)) {
      if (isLoopback(bind) || !svc.record.service?.address) {
        problem(
          field,
          'error',
          `service "${name}" on ${hostName} listens on ${bind} only, which the trainer (on ${req.run.host}, ${req.run.scheduler} scheduler) cannot reach: stop it and start it again from this spec (it then binds 0.0.0.0), or set ${field}.bind`,
        );
        return undefined;
      }
      at = svc.record.service.address;
    }
    const url = `http://${at}:${svc.port}/v1`;
    const use: ServiceUse = {
      host: hostName,
      engine: svc.engine,
      model: svc.model,
      servedName: svc.servedModelName,
      url,
      runId: svc.record.id,
    };
    return { url, model: svc.servedModelName, ...(key ? { apiKey: key } : {}), use: { service: use } };
  }
  problem(
    field,
    'error',
    `the run needs service "${name}" on ${hostName} but it is not running: start it first (MedRL: Start Services from Spec, or medrl serve --spec)`,
  );
  return undefined;
}
