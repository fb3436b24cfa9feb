import * as vscode from 'vscode';
import { Ctx } from './ctx';
import { registerCommands, type CommandTable, type Deps } from './deps';
import { WorkspaceConfigState } from './config/workspace-config-state';
import { CONFIG_COMMANDS } from './config/config-commands';
import { DEMO_COMMANDS, openWalkthroughInDemo } from './demo/demo-commands';
import { HostsTree } from './hosts/hosts-tree';
import { createHostPool } from './hosts/host-pool';
import { HOST_COMMANDS } from './hosts/host-commands';
import { DatasetsTree } from './datasets/datasets-tree';
import { DatasetInspections } from './datasets/dataset-inspections';
import { DatasetPreviews } from './datasets/dataset-preview';
import { PhiScans } from './datasets/phi-scans';
import { DATASET_COMMANDS } from './datasets/dataset-commands';
import { REWARD_COMMANDS, registerRewardCodeLens } from './reward/reward-commands';
import { RewardPlayground } from './reward/playground-panel';
import { CheckpointsTree } from './checkpoints/checkpoints-tree';
import { CHECKPOINT_COMMANDS } from './checkpoints/checkpoint-commands';
import { ServicesTree } from './services/services-tree';
import { ServiceKeys } from './services/service-keys';
import { SERVICE_COMMANDS } from './services/service-commands';
import { METRICS_COMMANDS } from './metrics/metrics-commands';
import { RunsTree } from './runs/runs-tree';
import { RUN_COMMANDS } from './runs/run-commands';
import { RunSpecs } from './runs/run-specs';
import { RunLogFollowers } from './runs/run-log-followers';
import { RunWatch } from './runs/run-watch';
import { RUN_FILE_SCHEME, RunFileProvider } from './runs/run-file-provider';
import { RUN_DETAILS_SCHEME, RunDetailsProvider, RunProvenances } from './runs/run-provenance';
import { RERUN_DIFFERENCES_SCHEME, RerunDifferencesProvider } from './runs/rerun-differences';
import { TOKEN_COMMANDS, secretStorageSource } from './runs/run-secrets';
import { EPISODE_COMMANDS } from './episodes/episode-commands';
import { REVIEW_COMMANDS } from './review/review-commands';
import { errorMessage } from '../core/errors/located-error';

let ctx: Ctx | undefined;

export function activate(extension: vscode.ExtensionContext): void {
  const started = performance.now();
  // CPU time as well as wall time: on a busy machine the wall time of this synchronous function grows with other
  // processes' load, its CPU time only with its own work.
  const cpu0 = process.cpuUsage();
  ctx = new Ctx(extension);
  extension.subscriptions.push(ctx);
  const deps = createDeps(ctx);
  for (const table of FEATURE_COMMANDS) registerCommands(deps, table);
  registerRewardCodeLens(deps);
  openWalkthroughInDemo(ctx);
  const log = ctx.log;
  // medrl.yaml is read after activate returns, so activation stays fast; the views fill in when it is loaded.
  deps.state.reload().catch((err: unknown) => log.error(`reading medrl.yaml: ${errorMessage(err)}`));
  logActivation(ctx, extension, performance.now() - started, process.cpuUsage(cpu0));
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}

/** Everything the window's features share, each built once; the views are created here too. */
function createDeps(ctx: Ctx): Deps {
  const state = new WorkspaceConfigState(ctx);
  const pool = createHostPool(state, ctx);
  ctx.push({ dispose: () => void pool.dispose() });
  const hosts = new HostsTree(state, pool);
  const runProvenances = new RunProvenances(ctx, pool);
  const runs = new RunsTree(ctx, state, pool, runProvenances);
  const inspections = new DatasetInspections(ctx, pool);
  const phiScans = new PhiScans(ctx, pool);
  const datasets = new DatasetsTree(state, pool, inspections, phiScans);
  const checkpoints = new CheckpointsTree(ctx, state, pool);
  const serviceKeys = new ServiceKeys(ctx.extension.secrets);
  const services = new ServicesTree(ctx, state, pool, serviceKeys);
  ctx.push(
    state,
    hosts,
    inspections,
    phiScans,
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
  const previews = new DatasetPreviews(ctx, pool, inspections);
  const playground = new RewardPlayground(ctx, state, pool);
  ctx.push(previews, playground);
  const runSpecs = new RunSpecs();
  const runLogs = new RunLogFollowers(ctx, state, pool);
  const runWatch = new RunWatch(ctx, pool, runs);
  const findRun = async (host: string, id: string) => {
    const find = () => runs.runs.find((r) => r.host === host && r.record.id === id);
    if (!find()) await runs.refresh();
    return find();
  };
  ctx.push(
    runSpecs,
    vscode.workspace.registerTextDocumentContentProvider(RUN_FILE_SCHEME, new RunFileProvider(pool)),
    vscode.workspace.registerTextDocumentContentProvider(RUN_DETAILS_SCHEME, new RunDetailsProvider(runProvenances, findRun)),
    vscode.workspace.registerTextDocumentContentProvider(RERUN_DIFFERENCES_SCHEME, new RerunDifferencesProvider()),
    runLogs,
    runWatch,
  );
  // Runs get MEDRL_<NAME>_URL/_MODEL/_API_KEY, MEDRL_JUDGE_* and tokens; the secrets from SecretStorage.
  const runSecrets = secretStorageSource(ctx, serviceKeys);
  return {
    ctx,
    state,
    pool,
    trees: { hosts, runs, datasets, checkpoints, services },
    inspections,
    previews,
    phiScans,
    serviceKeys,
    playground,
    runSpecs,
    runLogs,
    runWatch,
    runSecrets,
    runProvenances,
  };
}

/** Commands of the window as a whole. */
const WINDOW_COMMANDS: CommandTable = {
  'medrl.showLog': showLogCommand,
  'medrl.refresh': refreshCommand,
};

/** Every feature's command table (deps.ts describes the pattern). */
const FEATURE_COMMANDS: CommandTable[] = [
  WINDOW_COMMANDS,
  CONFIG_COMMANDS,
  DEMO_COMMANDS,
  HOST_COMMANDS,
  DATASET_COMMANDS,
  CHECKPOINT_COMMANDS,
  SERVICE_COMMANDS,
  REWARD_COMMANDS,
  METRICS_COMMANDS,
  RUN_COMMANDS,
  TOKEN_COMMANDS,
  EPISODE_COMMANDS,
  REVIEW_COMMANDS,
];

function showLogCommand({ ctx }: Deps) {
  return (): void => ctx.log.show();
}

/** Reads medrl.yaml again and refreshes every view. */
function refreshCommand({ state, trees }: Deps) {
  return async (): Promise<void> => {
    await state.reload();
    trees.hosts.refresh();
    trees.datasets.refresh();
    trees.checkpoints.refresh();
    trees.services.refresh();
    await trees.runs.refresh();
  };
}

function logActivation(ctx: Ctx, extension: vscode.ExtensionContext, ms: number, cpu: NodeJS.CpuUsage): void {
  const marks = globalThis as { __medrlLoadStart?: number; __medrlLoadEnd?: number };
  const load =
    marks.__medrlLoadStart === undefined || marks.__medrlLoadEnd === undefined
      ? 'unknown'
      : `${(marks.__medrlLoadEnd - marks.__medrlLoadStart).toFixed(2)} ms`;
  ctx.log.info(
    `MedRL Studio ${String(extension.extension.packageJSON.version)} activated in ${ms.toFixed(2)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(2)} ms; bundle load ${load}; trusted workspace: ${vscode.workspace.isTrusted})`,
  );
}
