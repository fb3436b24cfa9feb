import { HostPool } from '../../core/remote/host-pool';
import { LOCAL_HOST, resolveHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { WorkspaceConfigState } from '../config/workspace-config-state';

/** The window's host pool: hosts are looked up in the current medrl.yaml; `local` exists even without one. */
export function createHostPool(state: WorkspaceConfigState): HostPool {
  const builtinLocal: ResolvedHost = { name: LOCAL_HOST, kind: 'local', runsDir: '~/.medrl/runs', setup: [], env: {}, scheduler: 'ssh' };
  return new HostPool((name) => {
    const hosts = state.config ? resolveHosts(state.config) : [builtinLocal];
    return hosts.find((h) => h.name === name);
  });
}
