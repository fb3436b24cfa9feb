import type { HostPool } from '../core/remote/host-pool';
import type { Ctx } from './ctx';
import type { WorkspaceConfigState } from './config/workspace-config-state';
import type { HostsTree } from './hosts/hosts-tree';
import type { RunsTree } from './runs/runs-tree';
import type { DatasetsTree } from './datasets/datasets-tree';
import type { DatasetInspections } from './datasets/dataset-inspections';
import type { DatasetPreviews } from './datasets/dataset-preview';
import type { PhiScans } from './datasets/phi-scans';
import type { CheckpointsTree } from './checkpoints/checkpoints-tree';
import type { ServicesTree } from './services/services-tree';
import type { ServiceKeys } from './services/service-keys';
import type { RewardPlayground } from './reward/playground-panel';
import type { RunSpecs } from './runs/run-specs';
import type { RunLogFollowers } from './runs/run-log-followers';
import type { RunWatch } from './runs/run-watch';
import type { SecretSource } from '../core/submit/run-environment';
import type { RunProvenances } from './runs/run-provenance';

/**
 * What the features of the window share, built once in extension.ts (createDeps) and handed whole to every command.
 *
 * How a feature adds commands (see checkpoints/checkpoint-commands.ts):
 * - each command is an exported function named for what it does, `fooCommand(deps: Deps)`, that returns the handler;
 *   what the handler needs it takes from `deps`, never from positional arguments;
 * - the feature exports one table, `FOO_COMMANDS: CommandTable`, from command id to that function, and extension.ts
 *   registers every table with registerCommands();
 * - something the window keeps for as long as it lives (a tree, a panel, a cache of keys) is built in createDeps and is
 *   a field here, not a closure variable of a register function;
 * - a handler or panel opener much over ~50 lines is split into named helpers beside it.
 */
export interface Deps {
  ctx: Ctx;
  state: WorkspaceConfigState;
  /** One Host per host name for every feature: one connection per machine. */
  pool: HostPool;
  trees: { hosts: HostsTree; runs: RunsTree; datasets: DatasetsTree; checkpoints: CheckpointsTree; services: ServicesTree };
  inspections: DatasetInspections;
  previews: DatasetPreviews;
  /** The identifier counts of scanned datasets (never the text found). */
  phiScans: PhiScans;
  /** The API keys of the services this window started (SecretStorage). */
  serviceKeys: ServiceKeys;
  playground: RewardPlayground;
  /** The run specs of the workspace, checked as they are opened and saved. */
  runSpecs: RunSpecs;
  /** The run logs followed in output channels. */
  runLogs: RunLogFollowers;
  /** The active runs in the status bar, and a notification when a run submitted from this workspace ends. */
  runWatch: RunWatch;
  /** What runs get from SecretStorage: judge and service keys, tokens. */
  runSecrets: SecretSource;
  /** Runs' provenance manifests, each read once. */
  runProvenances: RunProvenances;
}

/** A command's handler; VS Code passes the arguments (a tree node, a URI, the selection). */
export type CommandHandler = (...args: never[]) => unknown;

/** A feature's commands: command id → the function that makes its handler from the shared deps. */
export type CommandTable = Record<string, (deps: Deps) => CommandHandler>;

/** Registers a feature's commands; failures are logged and shown by Ctx.command. */
export function registerCommands(deps: Deps, table: CommandTable): void {
  for (const [id, make] of Object.entries(table)) deps.ctx.command(id, make(deps));
}
