import * as vscode from 'vscode';
import { workspaceHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import type { Checkpoint } from '../../core/checkpoints/checkpoint';
import type { DiscoveredRun } from '../../core/checkpoints/discover-checkpoints';
import { listCheckpoints } from '../../core/checkpoints/list-checkpoints';
import { headlineMetric } from '../../core/checkpoints/headline-metrics';
import { formatBytes } from '../../core/format/bytes';
import { formatAge } from '../../core/format/age';
import { errorMessage } from '../../core/errors/located-error';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import type { Ctx } from '../ctx';
import { treeGate, type MessageNode } from '../tree-gate';

export type CheckpointsNode =
  | { kind: 'host'; host: ResolvedHost; runs: DiscoveredRun[]; error?: string }
  | { kind: 'run'; host: ResolvedHost; run: DiscoveredRun }
  | { kind: 'checkpoint'; host: ResolvedHost; ck: Checkpoint }
  | MessageNode;
type HostNode = Extract<CheckpointsNode, { kind: 'host' }>;

/** The medrl.checkpoints view: host → run → checkpoints (one discovery round trip per host), latest marked. */
export class CheckpointsTree implements vscode.TreeDataProvider<CheckpointsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: Ctx,
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
  ) {
    this.disposables = [state.onDidChange(() => this.refresh())];
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: CheckpointsNode): Promise<CheckpointsNode[]> {
    if (!element) {
      const gate = treeGate(this.state, 'welcome');
      if (gate) return gate;
      const hosts = await Promise.all(workspaceHosts(this.state.config).map((host) => this.hostNode(host)));
      // Nothing anywhere: the view's welcome text explains where checkpoints come from.
      return hosts.filter((h) => h.runs.length || h.error);
    }
    if (element.kind === 'host') return element.runs.map((run) => ({ kind: 'run', host: element.host, run }));
    if (element.kind === 'run') return element.run.checkpoints.map((ck) => ({ kind: 'checkpoint', host: element.host, ck }));
    return [];
  }

  /** One discovery round trip on a host: its runs that have checkpoints, or why it could not be asked. */
  private async hostNode(host: ResolvedHost): Promise<HostNode> {
    try {
      const d = await listCheckpoints(await this.pool.get(host.name), { runsDir: host.runsDir });
      for (const r of d.runs) if (r.problem) this.ctx.log.warn(r.problem);
      return { kind: 'host', host, runs: d.runs.filter((r) => r.checkpoints.length > 0) };
    } catch (err) {
      this.ctx.log.error(`checkpoints on ${host.name}: ${errorMessage(err)}`);
      return { kind: 'host', host, runs: [], error: errorMessage(err) };
    }
  }

  getTreeItem(element: CheckpointsNode): vscode.TreeItem {
    switch (element.kind) {
      case 'message':
        return element.item;
      case 'host':
        return hostItem(element);
      case 'run':
        return runItem(element.host, element.run);
      case 'checkpoint':
        return checkpointItem(element.ck);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

function hostItem(element: HostNode): vscode.TreeItem {
  const item = new vscode.TreeItem(element.host.name, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `ckhost:${element.host.name}`;
  item.iconPath = new vscode.ThemeIcon(element.error ? 'warning' : element.host.kind === 'local' ? 'device-desktop' : 'server');
  item.description = element.error ?? `${element.runs.length} run(s)`;
  item.tooltip = element.error ? `${element.host.name}: ${element.error}` : `Runs folder: ${element.host.runsDir}`;
  item.contextValue = 'medrl.checkpointHost';
  return item;
}

function runItem(host: ResolvedHost, r: DiscoveredRun): vscode.TreeItem {
  const item = new vscode.TreeItem(r.run.name ?? r.run.id ?? r.run.dir, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `ckrun:${host.name}:${r.run.dir}`;
  item.iconPath = new vscode.ThemeIcon('run-all');
  item.description = `${r.run.framework ?? ''} · ${r.checkpoints.length} checkpoint(s)`;
  item.tooltip = `${host.name}:${r.run.dir}${r.problem ? `\n\n${r.problem}` : ''}`;
  item.contextValue = 'medrl.checkpointRun';
  return item;
}

function checkpointItem(ck: Checkpoint): vscode.TreeItem {
  const name = ck.path.slice(ck.path.lastIndexOf('/') + 1);
  const item = new vscode.TreeItem(ck.latest ? `${name} (latest)` : name, vscode.TreeItemCollapsibleState.None);
  item.id = `ck:${ck.host}:${ck.path}`;
  const m = headlineMetric(ck.metrics, ck.framework);
  item.description = [
    `step ${ck.step}`,
    formatBytes(ck.sizeBytes),
    `${formatAge(ck.ageMs)} ago`,
    m ? `${m.key} ${m.value.toPrecision(3)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  item.iconPath = new vscode.ThemeIcon(ck.latest ? 'star-full' : 'save', ck.latest ? new vscode.ThemeColor('charts.yellow') : undefined);
  const md = new vscode.MarkdownString(`**${name}** on \`${ck.host}\`${ck.latest ? ' (latest)' : ''}\n\n`);
  md.appendMarkdown(
    `- kind: ${ck.kind}\n- holds: ${ck.parts.join(', ') || 'nothing recognised'}\n- size: ${formatBytes(ck.sizeBytes)}\n- path: \`${ck.path}\`\n`,
  );
  if (ck.servable) md.appendMarkdown(`- HuggingFace folder: \`${ck.servable}\`\n`);
  if (ck.metrics)
    md.appendMarkdown(
      Object.entries(ck.metrics)
        .slice(0, 12)
        .map(([k, v]) => `- ${k}: ${v}`)
        .join('\n'),
    );
  item.tooltip = md;
  // Flags in the context value drive which menu entries appear (merge needs shards, serve a HuggingFace folder).
  item.contextValue = ['medrl.checkpoint', ck.framework, ck.mergeable ? 'mergeable' : '', ck.servable ? 'servable' : '']
    .filter(Boolean)
    .join(' ');
  return item;
}
