import * as vscode from 'vscode';

/** The error for something an untrusted workspace may not do; `what` names it ("Submitting runs"). */
export function untrustedError(what: string): Error {
  return new Error(
    `${what} is disabled in an untrusted workspace: medrl.yaml and run specs name hosts, folders and commands. Trust the folder first (Manage Workspace Trust).`,
  );
}

/**
 * Connecting to hosts, reading run folders and running commands needs a trusted workspace: medrl.yaml and run specs
 * name the hosts, runsDir, setup lines and commands, and an untrusted repository chose them.
 */
export function requireTrust(what = 'Connecting to hosts and running jobs'): void {
  if (!vscode.workspace.isTrusted) throw untrustedError(what);
}
