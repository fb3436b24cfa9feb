import * as vscode from 'vscode';
import type { CommandTable, Deps } from '../deps';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { openDashboard, type DashboardTarget } from './dashboard-panel';
import type { RunInfo } from '../../core/runs/list-runs';
import { isTrainingRun } from '../../core/runs/run-pick';
import { BROWSE, pickRun, pickRuns } from '../pickers';

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
    // A Runs view item carries its listing (`run`), whose record lets the dashboard compare provenance.
    const record = (o.run as RunInfo | undefined)?.record;
    return { host: o.host, path: o.dir, framework: fw, name: typeof o.name === 'string' ? o.name : undefined, record };
  }
  if ('run' in o) return toTarget(o.run);
  return undefined;
}

/** The open dialog: one local run folder, or (files) one or more metrics files to overlay. */
async function browseTargets(files: boolean): Promise<DashboardTarget[]> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: files,
    canSelectFolders: !files,
    canSelectMany: files,
    openLabel: files ? 'Compare' : 'Open',
    title: files ? 'A metrics file: verl/TRL log, metrics.jsonl or trainer_state.json' : 'A run folder',
  });
  return (picked ?? []).map((u) => toTarget(u)!).filter(Boolean);
}

export const METRICS_COMMANDS: CommandTable = {
  'medrl.openRunDashboard': openRunDashboardCommand,
  'medrl.compareRuns': compareRunsCommand,
  'medrl.openMetricsFile': openMetricsFileCommand,
};

function runTarget(run: RunInfo): DashboardTarget {
  return { host: run.host, path: run.record.dir, framework: run.record.framework, name: run.record.name, record: run.record };
}

export function openRunDashboardCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    if (arg !== undefined) {
      const target = toTarget(arg);
      if (!target) throw new Error('medrl.openRunDashboard: expected a run {host, dir} or a folder/file URI');
      return openDashboard(deps, [target]);
    }
    const run = await pickRun(deps, { title: 'Run to chart', filter: isTrainingRun, browse: '$(folder-opened) Browse for a run folder…' });
    const target = run === BROWSE ? (await browseTargets(false))[0] : run && runTarget(run);
    if (target) openDashboard(deps, [target]);
  };
}

/** From a tree with several runs selected, VS Code passes (clicked item, all selected items); from the palette, runs are picked. */
export function compareRunsCommand(deps: Deps) {
  return async (arg?: unknown, selected?: unknown): Promise<void> => {
    const args = Array.isArray(selected) && selected.length ? selected : Array.isArray(arg) ? arg : arg !== undefined ? [arg] : [];
    const targets = args.map(toTarget).filter((t): t is DashboardTarget => t !== undefined);
    if (targets.length < 2) {
      const more = await pickRuns(deps, {
        title: targets.length ? `Runs to compare with ${targets[0]!.name ?? targets[0]!.path}` : 'Runs to compare',
        filter: (r) => isTrainingRun(r) && !targets.some((t) => t.host === r.host && t.path === r.record.dir),
        atLeast: 2 - targets.length,
        none: 'No other training runs on the hosts in medrl.yaml to compare with: submit a run spec first.',
      });
      if (!more) return;
      targets.push(...more.map(runTarget));
    }
    openDashboard(deps, targets);
  };
}

export function openMetricsFileCommand(deps: Deps) {
  return async (arg?: unknown, selected?: unknown): Promise<void> => {
    const args = Array.isArray(selected) && selected.length > 1 ? selected : arg !== undefined ? [arg] : [];
    const targets = args.length ? args.map(toTarget).filter((t): t is DashboardTarget => t !== undefined) : await browseTargets(true);
    if (targets.length) openDashboard(deps, targets);
  };
}
