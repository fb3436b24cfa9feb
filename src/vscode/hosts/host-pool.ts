import * as vscode from 'vscode';
import { HostPool, sshHostFactory } from '../../core/remote/host-pool';
import type { Host } from '../../core/remote/host';
import { defaultSshPaths } from '../../core/remote/ssh-config';
import { createSshContext } from '../../core/remote/ssh-connect';
import type { Ctx } from '../ctx';
import { secretStore, VscodePrompter } from './auth-prompter';
import { LOCAL_HOST, workspaceHosts } from '../../core/config/workspace-config';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { requireTrust, untrustedError } from '../workspace-trust';
import { WorkspaceConfinedHost } from './workspace-confined-host';

/**
 * The pool every feature gets its hosts from. In an untrusted workspace it is where Restricted Mode is enforced: no SSH
 * host (medrl.yaml, the repository's, names them), and a local host that runs nothing and reads only the workspace.
 */
class WorkspacePool extends HostPool {
  override async get(name: string): Promise<Host> {
    if (vscode.workspace.isTrusted) return super.get(name);
    if (name !== LOCAL_HOST) requireTrust(`Connecting to host "${name}"`);
    return new WorkspaceConfinedHost(
      await super.get(name),
      () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      untrustedError,
    );
  }
}

/** The window's host pool: hosts are looked up in the current medrl.yaml; `local` exists even without one. */
export function createHostPool(state: WorkspaceConfigState, ctx: Ctx): HostPool {
  // One SSH context for the window: a passphrase or 2FA answer is asked once per session, not per host or refresh.
  const ssh = createSshContext(defaultSshPaths(), new VscodePrompter(true), secretStore(ctx.extension.secrets));
  return new WorkspacePool(() => workspaceHosts(state.config), sshHostFactory(ssh));
}
