import * as vscode from 'vscode';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { configProblemItem } from '../config/config-problem-item';
import { formatBytes } from '../../core/format/bytes';

const DATA_EXTENSIONS = ['.json', '.jsonl', '.parquet', '.csv'];

type Node =
  | { kind: 'root'; label: string; uri: vscode.Uri; host?: string }
  | { kind: 'folder'; uri: vscode.Uri }
  | { kind: 'file'; uri: vscode.Uri; size: number };

/** The medrl.datasets view: dataset roots from medrl.yaml and the data files under them. */
export class DatasetsTree implements vscode.TreeDataProvider<Node | vscode.TreeItem>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly state: WorkspaceConfigState) {
    this.sub = state.onDidChange(() => this.refresh());
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: Node | vscode.TreeItem): Promise<(Node | vscode.TreeItem)[]> {
    if (element instanceof vscode.TreeItem) return [];
    if (!element) {
      const problem = configProblemItem(this.state);
      if (problem) return [problem];
      const root = this.state.root;
      if (!this.state.config || !root) return [];
      return this.state.config.datasets.map((d) => ({
        kind: 'root' as const,
        label: d.label ?? d.path,
        host: d.host,
        uri: d.path.startsWith('/') ? vscode.Uri.file(d.path) : vscode.Uri.joinPath(root, d.path),
      }));
    }
    if (element.kind === 'file') return [];
    if (element.kind === 'root' && element.host && element.host !== 'local') {
      const item = new vscode.TreeItem(`on host ${element.host}: browsing remote roots needs the hosts layer`);
      item.iconPath = new vscode.ThemeIcon('info');
      return [item];
    }
    let entries: [string, vscode.FileType][];
    try {
      entries = await vscode.workspace.fs.readDirectory(element.uri);
    } catch (err) {
      const item = new vscode.TreeItem(`cannot read ${vscode.workspace.asRelativePath(element.uri)}`);
      item.description = err instanceof Error ? err.message : String(err);
      item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
      return [item];
    }
    const nodes: Node[] = [];
    for (const [name, type] of entries.sort(([a], [b]) => a.localeCompare(b))) {
      const uri = vscode.Uri.joinPath(element.uri, name);
      if (type & vscode.FileType.Directory) nodes.push({ kind: 'folder', uri });
      else if (DATA_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext))) {
        const stat = await vscode.workspace.fs.stat(uri);
        nodes.push({ kind: 'file', uri, size: stat.size });
      }
    }
    return nodes;
  }

  getTreeItem(element: Node | vscode.TreeItem): vscode.TreeItem {
    if (element instanceof vscode.TreeItem) return element;
    if (element.kind === 'file') {
      const item = new vscode.TreeItem(element.uri, vscode.TreeItemCollapsibleState.None);
      item.description = formatBytes(element.size);
      item.contextValue = 'medrl.dataset.file';
      item.command = { command: 'vscode.open', title: 'Open', arguments: [element.uri] };
      return item;
    }
    if (element.kind === 'folder') return new vscode.TreeItem(element.uri, vscode.TreeItemCollapsibleState.Collapsed);
    const item = new vscode.TreeItem(element.label, vscode.TreeItemCollapsibleState.Expanded);
    {
      item.iconPath = new vscode.ThemeIcon(element.host && element.host !== 'local' ? 'remote' : 'database');
      item.description = element.host ? `${element.host}:${element.uri.path}` : vscode.workspace.asRelativePath(element.uri);
      item.contextValue = 'medrl.dataset.root';
    }
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
