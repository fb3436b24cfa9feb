import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONFIG_FILE_NAME } from '../../core/config/load-workspace-config';
import { findHost, LOCAL_HOST, workspaceHosts, type ResolvedHost, type WorkspaceConfig } from '../../core/config/workspace-config';
import { errorMessage } from '../../core/errors/located-error';
import type { HostPool } from '../../core/remote/host-pool';
import { cliHostPool, openWorkspace } from '../host-pool';
import { UsageError, type CommandContext } from '../command';

/**
 * The workspace's hosts for commands that also work outside a workspace: with no medrl.yaml (and no --config) only the
 * built-in local host exists.
 */
export async function openWorkspaceHosts(
  ctx: CommandContext,
): Promise<{ file?: string; config: WorkspaceConfig | undefined; pool: HostPool; hosts: ResolvedHost[] }> {
  const configArg = ctx.values.config as string | undefined;
  if (configArg || existsSync(join(resolve(ctx.cwd), CONFIG_FILE_NAME))) {
    const { file, config, pool } = await openWorkspace(ctx.cwd, configArg);
    return { file, config, pool, hosts: workspaceHosts(config) };
  }
  const pool = cliHostPool(undefined);
  return { config: undefined, pool, hosts: workspaceHosts() };
}

/** The host named by --host (default: medrl.yaml's defaults.host, else local); an unknown one is a usage error (exit 2). */
export function pickHost(hosts: ResolvedHost[], config: WorkspaceConfig | undefined, name: string | undefined): ResolvedHost {
  try {
    return findHost(hosts, name ?? config?.defaults.host ?? LOCAL_HOST);
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
}
