import * as vscode from 'vscode';
import { workspaceHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { listAllRuns, type HostRuns } from '../../core/runs/run-catalog';
import type { RunInfo } from '../../core/runs/list-runs';
import { isActive, type RunState } from '../../core/runs/run-record';
import { elapsedMs, formatDuration, stateLabel, stepLabel } from '../../core/runs/run-summary';
import { errorMessage, formatProblem } from '../../core/errors/located-error';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import type { Ctx } from '../ctx';
import { treeGate, type MessageNode } from '../tree-gate';
import { provenanceSummary } from '../../core/runs/provenance-text';
import type { RunProvenances } from './run-provenance';

/**
 * A run in the tree is also a run ref (`{ host, dir, framework, id }`), so commands of other features (dashboard, replay,
 * checkpoints) can be put on its context menu and receive what they expect.
 */
interface RunNode {
  kind: 'run';
  run: RunInfo;
  host: string;
  dir: string;
  framework: RunInfo['record']['framework'];
  id: string;
}

function runNode(run: RunInfo): RunNode {
  return { kind: 'run', run, host: run.host, dir: run.record.dir, framework: run.record.framework, id: run.record.id };
}

/** A refresh's listing, and when it began: a run submitted after that cannot be in it. */
export interface RunsRefresh {
  hosts: HostRuns[];
  startedAt: number;
}

export type RunsNode = { kind: 'host'; hostRuns: HostRuns } | { kind: 'status'; state: RunState; runs: RunInfo[] } | RunNode | MessageNode;

const ICONS: Record<RunState, [string, string | undefined]> = {
  queued: ['clock', 'charts.yellow'],
  running: ['sync~spin', 'charts.blue'],
  succeeded: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
  lost: ['question', 'charts.orange'],
};
const STATUS_ORDER: RunState[] = ['running', 'queued', 'failed', 'lost', 'succeeded', 'cancelled'];
/** A run state's codicon, as the Runs view and the run pickers show it. */
export function runStateIcon(state: RunState): vscode.ThemeIcon {
  const [icon, colour] = ICONS[state];
  return new vscode.ThemeIcon(icon, colour ? new vscode.ThemeColor(colour) : undefined);
}

/** While any run is queued or running, the tree refreshes itself this often (one round trip per host). */
const AUTO_REFRESH_MS = 3000;

/**
 * The medrl.runs view: every run on every host of medrl.yaml, grouped by host (or by status). A refresh is one round
 * trip per host; while runs are active it refreshes itself (the run watch tells the user when a submitted run ends).
 */
export class RunsTree implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly refreshed = new vscode.EventEmitter<RunsRefresh>();
  /** Fires after every refresh, whether or not the view is open (the run watch announces ended runs from it). */
  readonly onDidRefresh = this.refreshed.event;
  private hosts: HostRuns[] = [];
  private groupBy: 'host' | 'status' = 'host';
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: Ctx,
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
    private readonly provenances: RunProvenances,
  ) {
    this.disposables = [state.onDidChange(() => void this.refresh()), vscode.workspace.onDidGrantWorkspaceTrust(() => void this.refresh())];
    void vscode.commands.executeCommand('setContext', 'medrl.runsGroupBy', this.groupBy);
  }

  setGroupBy(by: 'host' | 'status'): void {
    this.groupBy = by;
    void vscode.commands.executeCommand('setContext', 'medrl.runsGroupBy', by);
    this.changed.fire();
  }

  /** Every run known after the last refresh. */
  get runs(): RunInfo[] {
    return this.hosts.flatMap((h) => h.runs);
  }

  hostConfigs(): ResolvedHost[] {
    return this.state.config ? workspaceHosts(this.state.config) : [];
  }

  /** Lists every host again (one round trip each); concurrent calls share one refresh. */
  refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Whether the tree will refresh itself again (some run is active). */
  get autoRefreshing(): boolean {
    return this.timer !== undefined;
  }

  private async load(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const startedAt = Date.now();
    // An untrusted workspace connects to no host and runs nothing, listing included.
    const hosts = vscode.workspace.isTrusted ? this.hostConfigs() : [];
    const before = new Map(this.hosts.map((h) => [h.host.name, h.runs]));
    // A host that cannot be asked keeps its last known runs (shown under "unreachable"), and is asked again.
    this.hosts = (hosts.length ? await listAllRuns(this.pool, hosts) : []).map((h) =>
      h.error ? { ...h, runs: before.get(h.host.name) ?? [] } : h,
    );
    for (const h of this.hosts) {
      if (h.error) this.ctx.log.warn(`runs on ${h.host.name}: ${h.error}`);
      for (const p of h.problems) this.ctx.log.warn(formatProblem(p));
    }
    void vscode.commands.executeCommand('setContext', 'medrl.hasRuns', this.runs.length > 0);
    this.changed.fire();
    if (this.runs.some((r) => isActive(r.state))) {
      this.timer = setTimeout(
        () => void this.refresh().catch((err: unknown) => this.ctx.log.error(`refreshing runs: ${errorMessage(err)}`)),
        AUTO_REFRESH_MS,
      );
    }
    this.refreshed.fire({ hosts: this.hosts, startedAt });
  }

  getChildren(node?: RunsNode): RunsNode[] {
    if (!node) {
      const gate = treeGate(this.state, 'welcome');
      if (gate) return gate;
      if (this.groupBy === 'host')
        return this.hosts.filter((h) => h.runs.length || h.error || h.problems.length).map((hostRuns) => ({ kind: 'host', hostRuns }));
      return STATUS_ORDER.map((state) => ({ kind: 'status' as const, state, runs: this.runs.filter((r) => r.state === state) })).filter(
        (g) => g.runs.length,
      );
    }
    if (node.kind === 'host') return node.hostRuns.runs.map(runNode);
    if (node.kind === 'status') return node.runs.map(runNode);
    return [];
  }

  getTreeItem(node: RunsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'message':
        return node.item;
      case 'host':
        return hostItem(node.hostRuns);
      case 'status':
        return statusItem(node.state, node.runs);
      case 'run':
        return runItem(node, this.groupBy === 'status');
    }
  }

  /**
   * A run's tooltip, built on hover (VS Code resolves only what getTreeItem left undefined): its record, then its
   * provenance summary, read once per run, never while listing.
   */
  async resolveTreeItem(item: vscode.TreeItem, node: RunsNode): Promise<vscode.TreeItem> {
    if (node.kind !== 'run') return item;
    const md = runTooltip(node.run);
    if (vscode.workspace.isTrusted) {
      try {
        const lines = provenanceSummary(await this.provenances.get(node.run));
        if (lines.length) md.appendMarkdown('\n\n---\n\n').appendText(lines.join('\n'));
      } catch (err) {
        md.appendMarkdown('\n\n---\n\n').appendText(`provenance not read: ${errorMessage(err)}`);
      }
    }
    item.tooltip = md;
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
    this.refreshed.dispose();
  }
}

function hostItem({ host, runs, error, problems }: HostRuns): vscode.TreeItem {
  const item = new vscode.TreeItem(host.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `runs-host:${host.name}`;
  item.contextValue = 'medrl.runsHost';
  const active = runs.filter((r) => isActive(r.state)).length;
  item.description = error
    ? 'unreachable'
    : `${runs.length} run(s)${active ? ` · ${active} active` : ''}${problems.length ? ` · ${problems.length} problem(s)` : ''}`;
  item.iconPath = error
    ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
    : new vscode.ThemeIcon(host.kind === 'local' ? 'device-desktop' : 'server');
  item.tooltip = error ?? (problems.length ? problems.map(formatProblem).join('\n') : `${host.name}: runs in ${host.runsDir}`);
  return item;
}

function statusItem(state: RunState, runs: RunInfo[]): vscode.TreeItem {
  const item = new vscode.TreeItem(state, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `runs-status:${state}`;
  item.description = `${runs.length}`;
  const [icon, colour] = ICONS[state];
  item.iconPath = new vscode.ThemeIcon(icon.replace('~spin', ''), colour ? new vscode.ThemeColor(colour) : undefined);
  return item;
}

function runTooltip(run: RunInfo): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${run.record.name}** · ${stateLabel(run)}\n\n`);
  md.appendText(
    `id: ${run.record.id}\nhost: ${run.host} (${run.record.scheduler}${run.record.jobId ? ` job ${run.record.jobId}` : run.record.pid ? ` pid ${run.record.pid}` : ''})\n${run.record.framework} ${run.record.algorithm}\ncreated: ${run.record.created}\nfolder: ${run.record.dir}${run.reason ? `\n${run.reason}` : ''}`,
  );
  return md;
}

/** A run; grouped by status, its description names its host; its tooltip is built on hover (resolveTreeItem). */
function runItem(node: RunNode, showHost: boolean): vscode.TreeItem {
  const { run } = node;
  const item = new vscode.TreeItem(run.record.name, vscode.TreeItemCollapsibleState.None);
  item.id = `run:${run.host}:${run.record.id}`;
  item.contextValue = `medrl.run.${isActive(run.state) ? 'active' : 'ended'}`;
  item.description = [stateLabel(run), stepLabel(run), formatDuration(elapsedMs(run)), showHost ? run.host : '']
    .filter(Boolean)
    .join(' · ');
  item.iconPath = runStateIcon(run.state);
  item.command = { command: 'medrl.followRunLogs', title: 'Follow Logs', arguments: [node] };
  return item;
}
