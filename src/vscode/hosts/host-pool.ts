import { HostPool, sshHostFactory } from '../../core/remote/host-pool';
import { defaultSshPaths } from '../../core/remote/ssh-config';
import { createSshContext } from '../../core/remote/ssh-connect';
import type { Ctx } from '../ctx';
import { secretStore, VscodePrompter } from './auth-prompter';
import { LOCAL_HOST, resolveHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { WorkspaceConfigState } from '../config/workspace-config-state';

/** The window's host pool: hosts are looked up in the current medrl.yaml; `local` exists even without one. */
export function createHostPool(state: WorkspaceConfigState, ctx: Ctx): HostPool {
  const builtinLocal: ResolvedHost = { name: LOCAL_HOST, kind: 'local', runsDir: '~/.medrl/runs', setup: [], env: {}, scheduler: 'ssh' };
  // One SSH context for the window: a passphrase or 2FA answer is asked once per session, not per host or refresh.
  const ssh = createSshContext(defaultSshPaths(), new VscodePrompter(true), secretStore(ctx.extension.secrets));
  return new HostPool((name) => {
    const hosts = state.config ? resolveHosts(state.config) : [builtinLocal];
    return hosts.find((h) => h.name === name);
  }, sshHostFactory(ssh));
}
