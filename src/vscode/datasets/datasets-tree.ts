import * as vscode from 'vscode';
import { posix } from 'node:path';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { formatBytes } from '../../core/format/bytes';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { datasetFormatOf } from '../../core/datasets/dataset-reader';
import { DATASET_KIND_LABELS } from '../../core/datasets/dataset-kinds';
import type { DatasetProblem, DatasetSummary } from '../../core/datasets/inspect-dataset';
import { errorMessage } from '../../core/errors/located-error';
import { rowAndLine } from '../../core/format/row-line';
import { AUTO_INSPECT_BYTES, type DatasetInspections } from './dataset-inspections';
import { isLocal, refKey, type DatasetRef } from './dataset-ref';
import { messageItem, treeGate, untrustedNode, type MessageNode } from '../tree-gate';
import { formatAge } from '../../core/format/age';
import { countsText, identifierTotal } from '../../core/phi/phi-categories';
import type { ScanCounts } from '../../core/phi/scan-counts';
import type { PhiScans } from './phi-scans';

export type DatasetsNode =
  | { kind: 'root'; label: string; host: string; path: string }
  | { kind: 'folder'; host: string; path: string }
  | { kind: 'file'; ref: DatasetRef; size: number; mtimeMs: number }
  | { kind: 'breakdown'; ref: DatasetRef; title: 'data_source' | 'ability'; counts: Record<string, number> }
  | { kind: 'problems'; ref: DatasetRef; summary: DatasetSummary }
  | { kind: 'problem'; ref: DatasetRef; problem: DatasetProblem }
  | MessageNode;
type Of<K extends DatasetsNode['kind']> = Extract<DatasetsNode, { kind: K }>;

const PROBLEMS_SHOWN = 50;

/**
 * The medrl.datasets view: dataset roots from medrl.yaml (workspace folders and folders on hosts, listed through the host
 * pool) and the data files under them, each with its kind, rows and size; RL files show their data_source and ability
 * breakdown, and a file with problems shows how many with a warning icon.
 */
export class DatasetsTree implements vscode.TreeDataProvider<DatasetsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
    private readonly inspections: DatasetInspections,
    private readonly phiScans: PhiScans,
  ) {
    this.disposables = [
      state.onDidChange(() => this.refresh()),
      inspections.onDidChange(() => this.refresh()),
      phiScans.onDidChange(() => this.refresh()),
    ];
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(element?: DatasetsNode): Promise<DatasetsNode[]> {
    if (!element) {
      const gate = treeGate(this.state, 'content');
      if (gate) return gate;
      const root = this.state.root;
      if (!this.state.config || !root) return [];
      return this.state.config.datasets.map((d) => {
        const host = d.host ?? LOCAL_HOST;
        const path = host !== LOCAL_HOST || d.path.startsWith('/') ? d.path : vscode.Uri.joinPath(root, d.path).fsPath;
        return { kind: 'root' as const, label: d.label ?? d.path, host, path };
      });
    }
    switch (element.kind) {
      case 'root':
      case 'folder':
        return this.list(element.host, element.path);
      case 'file':
        return this.fileChildren(element.ref);
      case 'problems':
        return element.summary.problems
          .slice(0, PROBLEMS_SHOWN)
          .map((problem) => ({ kind: 'problem' as const, ref: element.ref, problem }));
      default:
        return [];
    }
  }

  private async list(hostName: string, dir: string): Promise<DatasetsNode[]> {
    if (hostName !== LOCAL_HOST && !vscode.workspace.isTrusted) {
      return [untrustedNode(`trust this workspace to browse host ${hostName}`, { icon: 'shield' })];
    }
    try {
      const host = await this.pool.get(hostName);
      const entries = await host.readdir(dir);
      const nodes: DatasetsNode[] = [];
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (e.name.startsWith('.')) continue;
        const path = posix.join(dir, e.name);
        if (e.kind === 'directory') nodes.push({ kind: 'folder', host: hostName, path });
        else if (e.kind === 'file' && datasetFormatOf(e.name))
          nodes.push({ kind: 'file', ref: { host: hostName, path }, size: e.size, mtimeMs: e.mtimeMs });
      }
      for (const n of nodes)
        if (n.kind === 'file' && n.size <= AUTO_INSPECT_BYTES && !this.inspections.get(n.ref)) this.inspections.inspectInBackground(n.ref);
      return nodes;
    } catch (err) {
      const item = messageItem(`cannot read ${hostName === LOCAL_HOST ? dir : `${hostName}:${dir}`}`, 'warning');
      item.description = errorMessage(err);
      return [{ kind: 'message', item }];
    }
  }

  private fileChildren(ref: DatasetRef): DatasetsNode[] {
    const s = this.inspections.get(ref);
    if (s?.state !== 'done') return [];
    const out: DatasetsNode[] = [];
    if (Object.keys(s.summary.dataSources).length)
      out.push({ kind: 'breakdown', ref, title: 'data_source', counts: s.summary.dataSources });
    if (Object.keys(s.summary.abilities).length) out.push({ kind: 'breakdown', ref, title: 'ability', counts: s.summary.abilities });
    if (s.summary.problemCount) out.push({ kind: 'problems', ref, summary: s.summary });
    return out;
  }

  getTreeItem(element: DatasetsNode): vscode.TreeItem {
    switch (element.kind) {
      case 'message':
        return element.item;
      case 'root':
        return rootItem(element);
      case 'folder':
        return folderItem(element);
      case 'file':
        return this.fileItem(element);
      case 'breakdown':
        return breakdownItem(element);
      case 'problems':
        return problemsItem(element.summary);
      case 'problem':
        return problemItem(element);
    }
  }

  /** A file's tooltip is built on hover, so the age of its identifier scan is the age then. */
  resolveTreeItem(item: vscode.TreeItem, element: DatasetsNode): vscode.TreeItem {
    if (element.kind === 'file') item.tooltip = this.fileTooltip(element);
    return item;
  }

  private fileTooltip({ ref, size, mtimeMs }: Of<'file'>): string | vscode.MarkdownString | undefined {
    const s = this.inspections.get(ref);
    const tooltip =
      s?.state === 'failed'
        ? s.error
        : s?.state === 'done' && s.summary.problemCount
          ? `${s.summary.problemCount} problem(s); ${s.summary.rowsOk} of ${s.summary.rows} rows fine`
          : undefined;
    return withScanLine(tooltip, this.phiScans.peek(ref, { size, mtimeMs }));
  }

  private fileItem({ ref, size }: Of<'file'>): vscode.TreeItem {
    const s = this.inspections.get(ref);
    const done = s?.state === 'done' ? s.summary : undefined;
    const hasChildren =
      done && (done.problemCount > 0 || Object.keys(done.dataSources).length > 0 || Object.keys(done.abilities).length > 0);
    const item = new vscode.TreeItem(
      posix.basename(ref.path),
      hasChildren ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `file:${refKey(ref)}`;
    if (isLocal(ref)) item.resourceUri = vscode.Uri.file(ref.path);
    const parts: string[] = [];
    if (done) parts.push(DATASET_KIND_LABELS[done.kind], `${done.rows} rows`);
    else if (s?.state === 'running') parts.push('inspecting…');
    else if (s?.state === 'failed') parts.push('unreadable');
    parts.push(formatBytes(size));
    if (done?.problemCount) parts.push(`${done.problemCount} problem(s)`);
    item.description = parts.join(' · ');
    if (s?.state === 'failed') {
      item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
    } else if (done?.problemCount) {
      item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
    } else if (!isLocal(ref)) {
      item.iconPath = new vscode.ThemeIcon('file');
    }
    item.contextValue = isLocal(ref) ? 'medrl.dataset.file.local' : 'medrl.dataset.file.remote';
    item.command = { command: 'medrl.openDatasetPreview', title: 'Preview', arguments: [ref] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

/**
 * A file's tooltip with the line of its last identifier scan, when the file still has the size and mtime it was scanned
 * with (the tree's listing says so): counts only, never the text found. Markdown because that is what a tooltip renders
 * as a block; appendText escapes what the file's error message might hold.
 */
function withScanLine(tooltip: string | undefined, scan: ScanCounts | undefined): string | vscode.MarkdownString | undefined {
  if (!scan) return tooltip;
  const age = `scanned ${formatAge(Date.now() - scan.scannedAt)} ago`;
  const line = identifierTotal(scan.counts) ? `Identifiers (${age}): ${countsText(scan.counts)}` : `No identifiers found (${age})`;
  const md = new vscode.MarkdownString();
  if (tooltip) md.appendText(`${tooltip}\n\n`);
  return md.appendText(line);
}

function rootItem(element: Of<'root'>): vscode.TreeItem {
  const item = new vscode.TreeItem(element.label, vscode.TreeItemCollapsibleState.Expanded);
  const remote = element.host !== LOCAL_HOST;
  item.iconPath = new vscode.ThemeIcon(remote ? 'remote' : 'database');
  item.description = remote ? `${element.host}:${element.path}` : vscode.workspace.asRelativePath(element.path);
  item.contextValue = 'medrl.dataset.root';
  item.id = `root:${element.host}:${element.path}`;
  return item;
}

function folderItem(element: Of<'folder'>): vscode.TreeItem {
  const item = new vscode.TreeItem(posix.basename(element.path), vscode.TreeItemCollapsibleState.Collapsed);
  if (element.host === LOCAL_HOST) item.resourceUri = vscode.Uri.file(element.path);
  item.iconPath = vscode.ThemeIcon.Folder;
  item.id = `folder:${element.host}:${element.path}`;
  return item;
}

function breakdownItem(element: Of<'breakdown'>): vscode.TreeItem {
  const entries = Object.entries(element.counts).sort((a, b) => b[1] - a[1]);
  const item = new vscode.TreeItem(`${element.title}: ${entries.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  item.iconPath = new vscode.ThemeIcon(element.title === 'data_source' ? 'symbol-namespace' : 'symbol-enum');
  item.tooltip = entries.map(([k, n]) => `${k}: ${n} row(s)`).join('\n');
  return item;
}

function problemsItem(s: DatasetSummary): vscode.TreeItem {
  const item = new vscode.TreeItem(`${s.problemCount} problem(s)`, vscode.TreeItemCollapsibleState.Collapsed);
  const errors = s.problems.some((p) => p.severity === 'error');
  item.iconPath = new vscode.ThemeIcon(
    errors ? 'error' : 'warning',
    new vscode.ThemeColor(errors ? 'problemsErrorIcon.foreground' : 'problemsWarningIcon.foreground'),
  );
  item.description = `${s.rowsOk} of ${s.rows} rows fine`;
  return item;
}

function problemItem(element: Of<'problem'>): vscode.TreeItem {
  const p = element.problem;
  const item = new vscode.TreeItem(`${p.row !== undefined ? rowAndLine({ row: p.row }) : 'file'}${p.field ? ` ${p.field}` : ''}`);
  item.description = p.reason;
  item.tooltip = `${[rowAndLine(p), p.field].filter(Boolean).join(', ')}: ${p.reason}`;
  item.iconPath = new vscode.ThemeIcon(
    p.severity === 'error' ? 'error' : 'warning',
    new vscode.ThemeColor(p.severity === 'error' ? 'problemsErrorIcon.foreground' : 'problemsWarningIcon.foreground'),
  );
  item.command = { command: 'medrl.openDatasetPreview', title: 'Preview', arguments: [{ ...element.ref, row: p.row }] };
  return item;
}
