import * as vscode from 'vscode';
import { Ctx } from './ctx';
import { WorkspaceConfigState } from './config/workspace-config-state';
import { registerConfigCommands } from './config/config-commands';
import { registerDemoCommands } from './demo/demo-commands';
import { HostsTree } from './hosts/hosts-tree';
import { createHostPool } from './hosts/host-pool';
import { DatasetsTree } from './datasets/datasets-tree';
import { emptyTree } from './empty-tree';
import { errorMessage } from '../core/errors/located-error';

let ctx: Ctx | undefined;

export function activate(extension: vscode.ExtensionContext): void {
  const started = performance.now();
  ctx = new Ctx(extension);
  extension.subscriptions.push(ctx);
  const state = new WorkspaceConfigState(ctx);
  // One Host per host name for every feature: one connection per machine.
  const pool = createHostPool(state);
  ctx.push({ dispose: () => void pool.dispose() });
  const hosts = new HostsTree(state);
  const datasets = new DatasetsTree(state);
  ctx.push(
    state,
    hosts,
    datasets,
    vscode.window.createTreeView('medrl.hosts', { treeDataProvider: hosts, showCollapseAll: false }),
    vscode.window.createTreeView('medrl.datasets', { treeDataProvider: datasets, showCollapseAll: true }),
    vscode.window.createTreeView('medrl.runs', { treeDataProvider: emptyTree }),
    vscode.window.createTreeView('medrl.checkpoints', { treeDataProvider: emptyTree }),
  );
  registerConfigCommands(ctx, state);
  registerDemoCommands(ctx, state);
  const log = ctx.log;
  ctx.command('medrl.showLog', () => log.show());
  ctx.command('medrl.refresh', async () => {
    await state.reload();
    hosts.refresh();
    datasets.refresh();
  });
  // medrl.yaml is read after activate returns, so activation stays fast; the views fill in when it is loaded.
  state.reload().catch((err: unknown) => log.error(`reading medrl.yaml: ${errorMessage(err)}`));
  const ms = performance.now() - started;
  const marks = globalThis as { __medrlLoadStart?: number; __medrlLoadEnd?: number };
  const load = marks.__medrlLoadStart === undefined || marks.__medrlLoadEnd === undefined ? 'unknown' : `${(marks.__medrlLoadEnd - marks.__medrlLoadStart).toFixed(2)} ms`;
  log.info(`MedRL Studio ${String(extension.extension.packageJSON.version)} activated in ${ms.toFixed(2)} ms (bundle load ${load}; trusted workspace: ${vscode.workspace.isTrusted})`);
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
