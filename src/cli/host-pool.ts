import { resolve } from 'node:path';
import { requireWorkspaceConfig } from '../core/config/load-workspace-config';
import { workspaceHosts, type WorkspaceConfig } from '../core/config/workspace-config';
import { HostPool, sshHostFactory } from '../core/remote/host-pool';
import { defaultSshPaths } from '../core/remote/ssh-config';
import { createSshContext } from '../core/remote/ssh-connect';
import { cliPrompter } from './auth-prompter';

/**
 * The CLI's host pool for a workspace: hosts come from its medrl.yaml (or only `local` without one).
 * SSH hosts get their connections from the hosts layer (src/core/remote).
 */
export function cliHostPool(config: WorkspaceConfig | undefined): HostPool {
  const hosts = workspaceHosts(config);
  // HOME decides where ~/.ssh/config and known_hosts are (tests point it at a temp folder).
  const ctx = createSshContext(defaultSshPaths(), cliPrompter());
  return new HostPool(() => hosts, sshHostFactory(ctx));
}

/** Loads the workspace named by --config (default: the current folder) and its host pool. */
export async function openWorkspace(
  cwd: string,
  configArg: string | undefined,
): Promise<{ file: string; config: WorkspaceConfig; pool: HostPool }> {
  const { file, config } = await requireWorkspaceConfig(resolve(cwd, configArg ?? '.'));
  return { file, config, pool: cliHostPool(config) };
}
