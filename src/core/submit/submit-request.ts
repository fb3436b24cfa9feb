import { findHost, workspaceHosts, type WorkspaceConfig } from '../config/workspace-config';
import type { HostPool } from '../remote/host-pool';
import type { RunSpec } from '../runs/run-spec';
import type { SubmitRequest } from '../runs/submit-run';
import { resolveRunEnv, type SecretSource } from './run-environment';

export interface SubmitRequestInput {
  spec: RunSpec;
  specText: string;
  /** The spec's file, for problem locations. */
  specFile: string;
  config: WorkspaceConfig;
  /** The local workspace folder: the reward file's path is relative to it. */
  workspaceRoot: string;
  pool: HostPool;
  /** The host asked for (`medrl submit --host`); else the spec's `host:`, else medrl.yaml's defaults.host. */
  host?: string;
  secrets: SecretSource;
}

/**
 * The submit of a spec, the same from `medrl submit` and from the extension: its host, and the environment it gets
 * from outside its spec (services' URLs, judge, tokens) with the caller's secrets.
 */
export async function submitRequest(i: SubmitRequestInput): Promise<SubmitRequest> {
  const hostName = i.host ?? i.spec.host ?? i.config.defaults.host;
  const hosts = workspaceHosts(i.config);
  const hostConfig = findHost(hosts, hostName);
  const run = { host: hostName, scheduler: i.spec.scheduler ?? hostConfig.scheduler };
  const runEnv = await resolveRunEnv({
    spec: i.spec,
    specFile: i.specFile,
    config: i.config,
    hosts,
    pool: i.pool,
    run,
    secrets: i.secrets,
  });
  return {
    spec: i.spec,
    specText: i.specText,
    specFile: i.specFile,
    workspaceRoot: i.workspaceRoot,
    host: await i.pool.get(hostName),
    hostConfig,
    runEnv,
  };
}
