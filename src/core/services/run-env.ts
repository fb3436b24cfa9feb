import type { WorkspaceConfig } from '../config/workspace-config';
import type { RunSpec } from '../runs/run-spec';

/** A server as a run reaches it: base URL ending in /v1, the model name to ask for, and its key if it has one. */
export interface Endpoint {
  url: string;
  model: string;
  apiKey?: string;
}

export interface RunServiceEnv {
  /** MEDRL_<NAME>_URL and MEDRL_<NAME>_MODEL: safe to show and log. */
  env: Record<string, string>;
  /** MEDRL_<NAME>_API_KEY: for the launcher's mode-600 env file only, never a logged command line. */
  secretEnv: Record<string, string>;
}

/**
 * The environment a run gets for the servers it needs, so reward functions and environments read
 * MEDRL_JUDGE_URL / MEDRL_JUDGE_MODEL / MEDRL_JUDGE_API_KEY and MEDRL_<NAME>_URL ... instead of hard-coded ports.
 *
 * - each entry of the spec's `services:` gives one set: the running service's endpoint (`running[name]`), or, for
 *   `judge: J`, the medrl.yaml judge J;
 * - MEDRL_JUDGE_* is the spec's service named `judge` if any, else medrl.yaml's `defaults.judge`, else its only judge.
 *
 * `apiKeyOf(judgeName)` gives a judge's key from SecretStorage. A service the spec needs that is neither running nor a
 * judge is an error that names it.
 */
export function runServiceEnv(
  spec: Pick<RunSpec, 'services'>,
  config: Pick<WorkspaceConfig, 'judges' | 'defaults'>,
  running: Record<string, Endpoint>,
  apiKeyOf: (judge: string) => string | undefined = () => undefined,
): RunServiceEnv {
  const out: RunServiceEnv = { env: {}, secretEnv: {} };
  const judgeEndpoint = (name: string, where: string): Endpoint => {
    const j = config.judges[name];
    if (!j) throw new Error(`${where}: unknown judge "${name}": add it under judges in medrl.yaml`);
    const key = apiKeyOf(name);
    return { url: j.url.replace(/\/+$/, ''), model: j.model, ...(key ? { apiKey: key } : {}) };
  };
  const put = (name: string, e: Endpoint) => {
    const n = name.toUpperCase();
    out.env[`MEDRL_${n}_URL`] = e.url;
    out.env[`MEDRL_${n}_MODEL`] = e.model;
    if (e.apiKey) out.secretEnv[`MEDRL_${n}_API_KEY`] = e.apiKey;
  };
  for (const [name, s] of Object.entries(spec.services ?? {})) {
    if (s.judge) put(name, judgeEndpoint(s.judge, `services.${name}.judge`));
    else if (running[name]) put(name, running[name]!);
    else throw new Error(`services.${name}: the run needs service "${name}" (${s.model}) but it is not running: start it first (MedRL: Serve, or medrl serve --spec)`);
  }
  if (!out.env.MEDRL_JUDGE_URL) {
    const names = Object.keys(config.judges);
    const judge = config.defaults.judge ?? (names.length === 1 ? names[0] : undefined);
    if (judge) put('judge', judgeEndpoint(judge, 'defaults.judge'));
  }
  return out;
}

/** The base URL (ending in /v1) a run on the service's host uses to reach it. */
export function serviceEndpoint(port: number, servedModelName: string, apiKey?: string): Endpoint {
  return { url: `http://127.0.0.1:${port}/v1`, model: servedModelName, ...(apiKey ? { apiKey } : {}) };
}
