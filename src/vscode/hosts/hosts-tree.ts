import * as vscode from 'vscode';
import { resolveHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { configProblemItem } from '../config/config-problem-item';

/** The medrl.hosts view: the workspace's hosts, `local` first. */
export class HostsTree implements vscode.TreeDataProvider<ResolvedHost | vscode.TreeItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly state: WorkspaceConfigState) {
    this.sub = state.onDidChange(() => this.refresh());
  }

  refresh(): void {
    this.changed.fire();
  }

  getChildren(element?: ResolvedHost | vscode.TreeItem): (ResolvedHost | vscode.TreeItem)[] {
    if (element) return [];
    const problem = configProblemItem(this.state);
    if (problem) return [problem];
    return this.state.config ? resolveHosts(this.state.config) : [];
  }

  getTreeItem(element: ResolvedHost | vscode.TreeItem): vscode.TreeItem {
    if (element instanceof vscode.TreeItem) return element;
    const item = new vscode.TreeItem(element.name, vscode.TreeItemCollapsibleState.None);
    item.id = `host:${element.name}`;
    item.contextValue = `medrl.host.${element.kind}`;
    if (element.kind === 'local') {
      item.iconPath = new vscode.ThemeIcon('device-desktop', new vscode.ThemeColor('testing.iconPassed'));
      item.description = 'local processes · ready';
      item.tooltip = new vscode.MarkdownString(`**local**: runs jobs as processes on this machine (no GPU needed).\n\nRuns folder: \`${element.runsDir}\``);
    } else {
      item.iconPath = new vscode.ThemeIcon('server');
      item.description = `ssh ${element.sshAlias} · ${element.scheduler}`;
      item.tooltip = new vscode.MarkdownString(`**${element.name}**: \`ssh ${element.sshAlias}\` (from ~/.ssh/config)\n\nScheduler: ${element.scheduler}\n\nRuns folder: \`${element.runsDir}\``);
    }
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
