import * as vscode from 'vscode';
import { addSshHost } from '../../core/config/add-host';
import type { ResolvedHost } from '../../core/config/workspace-config';
import { checkEnvironment } from '../../core/remote/env-check';
import { defaultSshPaths, listSshAliases } from '../../core/remote/ssh-config';
import { SshHost } from '../../core/remote/ssh-host';
import type { CommandTable, Deps } from '../deps';
import type { HostsNode } from './hosts-tree';
import { pickHost } from '../pickers';
import { requireTrust } from '../workspace-trust';
import { editConfigFile } from '../config/config-edit';

/** The host a command is about: the tree item it was run on, or one the user picks (undefined when they back out). */
async function hostArg(deps: Deps, node: HostsNode | undefined, title: string, sshOnly: boolean): Promise<ResolvedHost | undefined> {
  if (node?.kind === 'host') return node.entry;
  return pickHost(deps, { title, sshOnly });
}

/** Connect, disconnect, open a terminal, add a host and check its environment, from the Hosts view and the palette. */
export const HOST_COMMANDS: CommandTable = {
  'medrl.hosts.connect': connectHostCommand,
  'medrl.hosts.disconnect': disconnectHostCommand,
  'medrl.hosts.openTerminal': openHostTerminalCommand,
  'medrl.hosts.add': addHostCommand,
  'medrl.hosts.checkEnvironment': checkEnvironmentCommand,
};

export function connectHostCommand(deps: Deps) {
  const {
    ctx,
    pool,
    trees: { hosts: tree },
  } = deps;
  return async (node?: HostsNode): Promise<void> => {
    requireTrust();
    const entry = await hostArg(deps, node, 'Host to connect to', true);
    if (!entry) return;
    const host = await pool.get(entry.name);
    // Not cancellable: reaching the host is bounded by ConnectTimeout, and each question can be dismissed.
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: connecting to ${entry.name}…` },
      async () => {
        if (host instanceof SshHost) await host.connect();
      },
    );
    ctx.log.info(`${entry.name}: connected`);
    tree.refresh(entry.name);
  };
}

export function disconnectHostCommand(deps: Deps) {
  const {
    ctx,
    pool,
    trees: { hosts: tree },
  } = deps;
  return async (node?: HostsNode): Promise<void> => {
    const entry = await hostArg(deps, node, 'Host to disconnect from', true);
    if (!entry) return;
    const host = await pool.get(entry.name);
    if (host instanceof SshHost) await host.disconnect();
    ctx.log.info(`${entry.name}: disconnected`);
    tree.refresh(entry.name);
  };
}

export function openHostTerminalCommand(deps: Deps) {
  return async (node?: HostsNode): Promise<void> => {
    requireTrust();
    const entry = await hostArg(deps, node, 'Host to open a terminal on', false);
    if (!entry) return;
    // The user's own ssh, with the alias: their config, agent and known_hosts apply exactly as in any terminal.
    const terminal =
      entry.kind === 'ssh'
        ? vscode.window.createTerminal({
            name: `MedRL: ${entry.name}`,
            shellPath: 'ssh',
            shellArgs: [entry.sshAlias ?? entry.name],
            iconPath: new vscode.ThemeIcon('server'),
          })
        : vscode.window.createTerminal({ name: 'MedRL: local', iconPath: new vscode.ThemeIcon('device-desktop') });
    terminal.show();
  };
}

/** Adds a Host of ~/.ssh/config to medrl.yaml (in the open editor when it has unsaved changes). */
export function addHostCommand({ ctx, state, trees: { hosts: tree } }: Deps) {
  return async (): Promise<void> => {
    const uri = state.uri;
    if (!uri || !state.config) throw new Error('create a valid medrl.yaml first ("MedRL: Create medrl.yaml")');
    const taken = new Set(
      tree
        .hosts()
        .map((h) => h.sshAlias)
        .filter(Boolean),
    );
    const paths = defaultSshPaths();
    const aliases = listSshAliases(paths).filter((a) => !taken.has(a));
    if (aliases.length === 0) {
      void vscode.window.showInformationMessage(
        `No new Host entries in ${paths.sshConfigPath}: add your GPU machine there first (Host, HostName, User, IdentityFile).`,
      );
      return;
    }
    const pick = await vscode.window.showQuickPick(
      aliases.map((a) => ({ label: a, iconPath: new vscode.ThemeIcon('server') })),
      { title: 'MedRL: add a host from ~/.ssh/config', placeHolder: 'SSH alias' },
    );
    if (!pick) return;
    const name = pick.label.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
    const saved = await editConfigFile(uri, (text) => addSshHost(text, name, pick.label, vscode.workspace.asRelativePath(uri)));
    await state.reload();
    ctx.log.info(
      `added host ${name} (ssh ${pick.label}) to ${vscode.workspace.asRelativePath(uri)}${saved === 'unsaved' ? ' (in the editor, with your unsaved changes: save it to use the host)' : ''}`,
    );
    if (saved === 'unsaved')
      void vscode.window.showInformationMessage(
        `MedRL: added ${name} to the open ${vscode.workspace.asRelativePath(uri)}, beside your unsaved changes: save it to use the host.`,
      );
  };
}

/** Checks Python, CUDA, the driver and the training packages on a host; the Hosts view shows the report. */
export function checkEnvironmentCommand(deps: Deps) {
  const {
    ctx,
    pool,
    trees: { hosts: tree },
  } = deps;
  return async (node?: HostsNode): Promise<void> => {
    requireTrust();
    const entry = await hostArg(deps, node, 'Host whose environment to check', false);
    if (!entry) return;
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: checking the environment of ${entry.name}…`, cancellable: false },
      async () => checkEnvironment(await pool.get(entry.name), entry),
    );
    tree.setEnvironment(report);
    ctx.log.info(
      `${entry.name}: Python ${report.python}, CUDA ${report.cuda ?? 'none'}, ${report.gpuCount} GPU(s), ${Object.entries(report.packages)
        .map(([n, v]) => `${n} ${v ?? '-'}`)
        .join(', ')}`,
    );
    for (const w of report.warnings) ctx.log.warn(`${entry.name}: ${w}`);
    const summary = `${entry.name}: Python ${report.python}, ${report.gpuCount} GPU(s), torch ${report.packages.torch ?? 'not installed'}`;
    if (report.warnings.length)
      void vscode.window.showWarningMessage(`${summary}. ${report.warnings.length} warning(s): ${report.warnings[0]}`);
    else void vscode.window.showInformationMessage(`${summary}: no known problems.`);
  };
}
