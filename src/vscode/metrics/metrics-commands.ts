import * as vscode from 'vscode';
import type { CommandTable, Deps } from '../deps';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { openDashboard, type DashboardTarget } from './dashboard-panel';

/**
 * What a command argument names: a run ref `{host, dir, framework?, name?}` (the runs tree, other features), a tree item
 * carrying one as `run`, or a file/folder URI (the explorer: a local path).
 */
function toTarget(arg: unknown): DashboardTarget | undefined {
  if (arg instanceof vscode.Uri) return arg.scheme === 'file' ? { host: LOCAL_HOST, path: arg.fsPath } : undefined;
  if (typeof arg !== 'object' || arg === null) return undefined;
  const o = arg as Record<string, unknown>;
  if (typeof o.host === 'string' && typeof o.dir === 'string') {
    const fw = o.framework === 'verl' || o.framework === 'trl' ? o.framework : undefined;
    return { host: o.host, path: o.dir, framework: fw, name: typeof o.name === 'string' ? o.name : undefined };
  }
  if ('run' in o) return toTarget(o.run);
  return undefined;
}

async function pickTargets(many: boolean, files: boolean): Promise<DashboardTarget[]> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: files,
    canSelectFolders: !files,
    canSelectMany: many,
    openLabel: many ? 'Compare' : 'Open',
    title: files ? 'A metrics file: verl/TRL log, metrics.jsonl or trainer_state.json' : many ? 'Run folders to compare' : 'A run folder',
  });
  return (picked ?? []).map((u) => toTarget(u)!).filter(Boolean);
}

export const METRICS_COMMANDS: CommandTable = {
  'medrl.openRunDashboard': openRunDashboardCommand,
  'medrl.compareRuns': compareRunsCommand,
  'medrl.openMetricsFile': openMetricsFileCommand,
};

export function openRunDashboardCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const target = arg === undefined ? (await pickTargets(false, false))[0] : toTarget(arg);
    if (arg !== undefined && !target) throw new Error('medrl.openRunDashboard: expected a run {host, dir} or a folder/file URI');
    if (target) openDashboard(deps, [target]);
  };
}

/** From a tree with several runs selected, VS Code passes (clicked item, all selected items). */
export function compareRunsCommand(deps: Deps) {
  return async (arg?: unknown, selected?: unknown): Promise<void> => {
    const args = Array.isArray(selected) && selected.length ? selected : Array.isArray(arg) ? arg : arg !== undefined ? [arg] : [];
    let targets = args.map(toTarget).filter((t): t is DashboardTarget => t !== undefined);
    if (targets.length < 2) targets = [...targets, ...(await pickTargets(true, false))];
    if (targets.length === 0) return;
    openDashboard(deps, targets);
  };
}

export function openMetricsFileCommand(deps: Deps) {
  return async (arg?: unknown, selected?: unknown): Promise<void> => {
    const args = Array.isArray(selected) && selected.length > 1 ? selected : arg !== undefined ? [arg] : [];
    const targets = args.length ? args.map(toTarget).filter((t): t is DashboardTarget => t !== undefined) : await pickTargets(true, true);
    if (targets.length) openDashboard(deps, targets);
  };
}
