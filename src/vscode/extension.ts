import * as vscode from 'vscode';
import { Ctx } from './ctx';
import { WorkspaceConfigState } from './config/workspace-config-state';
import { registerConfigCommands } from './config/config-commands';
import { registerDemoCommands } from './demo/demo-commands';
import { HostsTree } from './hosts/hosts-tree';
import { createHostPool } from './hosts/host-pool';
import { registerHostCommands } from './hosts/host-commands';
import { DatasetsTree } from './datasets/datasets-tree';
import { DatasetInspections } from './datasets/dataset-inspections';
import { registerDatasetCommands } from './datasets/dataset-commands';
import { registerRewardPlayground } from './reward/reward-commands';
import { CheckpointsTree } from './checkpoints/checkpoints-tree';
import { registerCheckpointCommands } from './checkpoints/checkpoint-commands';
import { ServicesTree } from './services/services-tree';
import { ServiceKeys } from './services/service-keys';
import { registerServiceCommands } from './services/service-commands';
import { registerMetricsCommands } from './metrics/metrics-commands';
import { RunsTree } from './runs/runs-tree';
import { registerRunCommands } from './runs/run-commands';
import { registerTokenCommands, secretStorageSource } from './runs/run-secrets';
import { registerEpisodeCommands } from './episodes/episode-commands';
import { errorMessage } from '../core/errors/located-error';

let ctx: Ctx | undefined;

export function activate(extension: vscode.ExtensionContext): void {
  const started = performance.now();
  // CPU time as well as wall time: on a busy machine the wall time of this synchronous function grows with other
  // processes' load, its CPU time only with its own work.
  const cpu0 = process.cpuUsage();
  ctx = new Ctx(extension);
  extension.subscriptions.push(ctx);
  const state = new WorkspaceConfigState(ctx);
  // One Host per host name for every feature: one connection per machine.
  const pool = createHostPool(state, ctx);
  ctx.push({ dispose: () => void pool.dispose() });
  const hosts = new HostsTree(state, pool);
  const runs = new RunsTree(ctx, state, pool);
  const inspections = new DatasetInspections(ctx, pool);
  const datasets = new DatasetsTree(state, pool, inspections);
  const checkpoints = new CheckpointsTree(ctx, state, pool);
  const serviceKeys = new ServiceKeys(extension.secrets);
  const services = new ServicesTree(ctx, state, pool, serviceKeys);
  ctx.push(
    state,
    hosts,
    inspections,
    datasets,
    runs,
    vscode.window.createTreeView('medrl.hosts', { treeDataProvider: hosts, showCollapseAll: false }),
    vscode.window.createTreeView('medrl.datasets', { treeDataProvider: datasets, showCollapseAll: true }),
    checkpoints,
    services,
    vscode.window.createTreeView('medrl.checkpoints', { treeDataProvider: checkpoints, showCollapseAll: true }),
    vscode.window.createTreeView('medrl.services', { treeDataProvider: services }),
    vscode.window.createTreeView('medrl.runs', { treeDataProvider: runs, canSelectMany: true }),
  );
  registerCheckpointCommands(ctx, state, pool, checkpoints);
  registerServiceCommands(ctx, state, pool, services, serviceKeys);
  registerConfigCommands(ctx, state);
  registerDemoCommands(ctx, state);
  registerRewardPlayground(ctx, state, pool);
  registerHostCommands(ctx, state, pool, hosts);
  registerMetricsCommands(ctx, pool);
  // Runs get MEDRL_<NAME>_URL/_MODEL/_API_KEY, MEDRL_JUDGE_* and tokens; the secrets from SecretStorage.
  registerRunCommands(ctx, state, pool, runs, secretStorageSource(ctx, serviceKeys));
  registerTokenCommands(ctx);
  registerDatasetCommands(ctx, state, pool, inspections, datasets);
  registerEpisodeCommands(ctx, pool);
  const log = ctx.log;
  ctx.command('medrl.showLog', () => log.show());
  ctx.command('medrl.refresh', async () => {
    await state.reload();
    hosts.refresh();
    datasets.refresh();
    checkpoints.refresh();
    services.refresh();
    await runs.refresh();
  });
  // medrl.yaml is read after activate returns, so activation stays fast; the views fill in when it is loaded.
  state.reload().catch((err: unknown) => log.error(`reading medrl.yaml: ${errorMessage(err)}`));
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  const marks = globalThis as { __medrlLoadStart?: number; __medrlLoadEnd?: number };
  const load = marks.__medrlLoadStart === undefined || marks.__medrlLoadEnd === undefined ? 'unknown' : `${(marks.__medrlLoadEnd - marks.__medrlLoadStart).toFixed(2)} ms`;
  log.info(`MedRL Studio ${String(extension.extension.packageJSON.version)} activated in ${ms.toFixed(2)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(2)} ms; bundle load ${load}; trusted workspace: ${vscode.workspace.isTrusted})`);
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
