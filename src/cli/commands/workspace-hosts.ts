import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONFIG_FILE_NAME } from '../../core/config/load-workspace-config';
import { LOCAL_HOST, resolveHosts, workspaceConfigSchema, type ResolvedHost, type WorkspaceConfig } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { cliHostPool, openWorkspace } from '../host-pool';
import { UsageError, type CommandContext } from '../command';

/**
 * The workspace's hosts for commands that also work outside a workspace: with no medrl.yaml (and no --config) only the
 * built-in local host exists.
 */
export async function workspaceHosts(ctx: CommandContext): Promise<{ config: WorkspaceConfig | undefined; pool: HostPool; hosts: ResolvedHost[] }> {
  const configArg = ctx.values.config as string | undefined;
  if (configArg || existsSync(join(resolve(ctx.cwd), CONFIG_FILE_NAME))) {
    const { config, pool } = await openWorkspace(ctx.cwd, configArg);
    return { config, pool, hosts: resolveHosts(config) };
  }
  const pool = cliHostPool(undefined);
  return { config: undefined, pool, hosts: resolveHosts(workspaceConfigSchema.parse({})) };
}

/** The host named by --host (default: medrl.yaml's defaults.host, else local). */
export function pickHost(hosts: ResolvedHost[], config: WorkspaceConfig | undefined, name: string | undefined): ResolvedHost {
  const want = name ?? config?.defaults.host ?? LOCAL_HOST;
  const h = hosts.find((x) => x.name === want);
  if (!h) throw new UsageError(`unknown host "${want}": the hosts are ${hosts.map((x) => x.name).join(', ')}`);
  return h;
}
