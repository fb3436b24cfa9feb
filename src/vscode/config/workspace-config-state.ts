import * as vscode from 'vscode';
import { parseWorkspaceConfig } from '../../core/config/load-workspace-config';
import type { WorkspaceConfig } from '../../core/config/workspace-config';
import type { Problem } from '../../core/errors/located-error';
import type { Ctx } from '../ctx';

/**
 * Owns medrl.yaml for the window: loads it, keeps it current as the file changes, shows its problems in the
 * Problems panel with their lines, and sets the `medrl.hasConfig` context key the welcome views use.
 */
export class WorkspaceConfigState implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly diagnostics = vscode.languages.createDiagnosticCollection('medrl');
  private current: { uri: vscode.Uri; config: WorkspaceConfig | undefined; problems: Problem[] } | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed, this.diagnostics];
  private firstRead!: () => void;
  private readonly read = new Promise<void>((resolve) => (this.firstRead = resolve));

  constructor(private readonly ctx: Ctx) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/medrl.yaml');
    this.disposables.push(
      watcher,
      watcher.onDidChange(() => void this.reload()),
      watcher.onDidCreate(() => void this.reload()),
      watcher.onDidDelete(() => void this.reload()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.reload()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('medrl.configFile')) void this.reload();
      }),
    );
  }

  /**
   * Resolves once medrl.yaml has been read the first time (or found missing or unreadable): a command run from the palette
   * as the extension activates would otherwise see no medrl.yaml yet.
   */
  loaded(): Promise<void> {
    return this.read;
  }

  get uri(): vscode.Uri | undefined {
    return this.current?.uri ?? this.expectedUri();
  }

  get config(): WorkspaceConfig | undefined {
    return this.current?.config;
  }

  /** The loaded medrl.yaml, for work that needs its hosts or services; a plain error while it is missing or invalid. */
  requireConfig(): WorkspaceConfig {
    if (!this.config) throw new Error('medrl.yaml is missing or has problems: see the Problems panel');
    return this.config;
  }

  get problems(): Problem[] {
    return this.current?.problems ?? [];
  }

  /** The folder relative paths in medrl.yaml resolve against. */
  get root(): vscode.Uri | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri;
  }

  private expectedUri(): vscode.Uri | undefined {
    const folder = this.root;
    if (!folder) return undefined;
    const name = vscode.workspace.getConfiguration('medrl', folder).get<string>('configFile', 'medrl.yaml');
    return vscode.Uri.joinPath(folder, name);
  }

  async reload(): Promise<void> {
    try {
      await this.load();
    } finally {
      this.firstRead();
    }
  }

  private async load(): Promise<void> {
    const uri = this.expectedUri();
    let next: typeof this.current;
    if (uri) {
      try {
        const bytes = await vscode.workspace.fs.readFile(uri);
        const loaded = parseWorkspaceConfig(new TextDecoder().decode(bytes), vscode.workspace.asRelativePath(uri));
        next = { uri, config: loaded.config, problems: loaded.problems };
      } catch (err) {
        if (!(err instanceof vscode.FileSystemError && err.code === 'FileNotFound')) throw err;
        next = undefined;
      }
    }
    this.current = next;
    this.diagnostics.clear();
    if (next) this.diagnostics.set(next.uri, next.problems.map(toDiagnostic));
    await vscode.commands.executeCommand('setContext', 'medrl.hasConfig', next !== undefined);
    if (next && !next.config)
      this.ctx.log.warn(`${vscode.workspace.asRelativePath(next.uri)} has ${next.problems.length} problem(s): see the Problems panel`);
    this.changed.fire();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

export function toDiagnostic(p: Problem): vscode.Diagnostic {
  const line = Math.max(0, (p.line ?? 1) - 1);
  const col = Math.max(0, (p.column ?? 1) - 1);
  const d = new vscode.Diagnostic(
    new vscode.Range(line, col, line, Number.MAX_SAFE_INTEGER),
    p.field ? `${p.field}: ${p.message}` : p.message,
    p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
  );
  d.source = 'MedRL';
  return d;
}
