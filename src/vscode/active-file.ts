import * as vscode from 'vscode';
import { parseRunSpec } from '../core/runs/load-run-spec';
import { LOCAL_HOST, workspaceHosts } from '../core/config/workspace-config';
import type { WorkspaceConfigState } from './config/workspace-config-state';

/**
 * The file the user is looking at, for a command run from the palette with no argument: the active tab's file. The tab
 * is known as soon as it opens, while `activeTextEditor` comes later (after the file is loaded) and never for a file
 * shown in a custom or binary editor (a .parquet), so the tab is asked first.
 */
export function activeFileUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputText || input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputNotebook)
    return input.uri;
  return vscode.window.activeTextEditor?.document.uri;
}

/** Run specs are the YAML files directly in a configs/ folder (the palette's `when` clauses say the same). */
const RUN_SPEC_PATH = /[\\/]configs[\\/][^\\/]+\.ya?ml$/;

/**
 * The run spec a command was given (a file URI); from the palette, the one the user is looking at; otherwise the user
 * picks one of the workspace's run specs. Undefined: the user closed the pick.
 */
export async function runSpecDocument(arg: unknown, state: WorkspaceConfigState): Promise<vscode.TextDocument | undefined> {
  const active = activeFileUri();
  const uri = arg instanceof vscode.Uri ? arg : active && RUN_SPEC_PATH.test(active.path) ? active : await pickRunSpec(state);
  return uri && vscode.workspace.openTextDocument(uri);
}

interface SpecItem extends vscode.QuickPickItem {
  uri: vscode.Uri;
  runnable: boolean;
}

/**
 * A quick pick of the workspace's run specs: name, framework and host of each; the ones whose host is in medrl.yaml
 * first (the demo's local spec before the seeds that need GPU hosts), then by file name.
 */
async function pickRunSpec(state: WorkspaceConfigState): Promise<vscode.Uri | undefined> {
  const known = workspaceHosts(state.config).map((h) => h.name);
  const defaultHost = state.config?.defaults.host ?? LOCAL_HOST;
  const files = await vscode.workspace.findFiles('**/configs/*.{yaml,yml}', '**/node_modules/**', 200);
  if (files.length === 0)
    throw new Error('no run specs in this workspace: a run spec is a YAML file in configs/ ("MedRL: New Run…" writes one)');
  const items: SpecItem[] = [];
  for (const uri of files) {
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    const { spec, problems } = parseRunSpec(text, uri.fsPath);
    const file = vscode.workspace.asRelativePath(uri);
    if (!spec) {
      const errors = problems.filter((p) => p.severity === 'error').length;
      items.push({ uri, runnable: false, label: `$(warning) ${file}`, description: `${errors} problem(s): open it to see them` });
      continue;
    }
    const host = spec.host ?? defaultHost;
    const runnable = known.includes(host);
    items.push({
      uri,
      runnable,
      label: `$(rocket) ${spec.name}`,
      description: `${spec.framework} ${spec.algorithm} · ${host}`,
      detail: runnable ? file : `${file} · host "${host}" is not in medrl.yaml`,
    });
  }
  items.sort((a, b) => Number(b.runnable) - Number(a.runnable) || a.uri.path.localeCompare(b.uri.path));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Which run spec?',
    placeHolder: 'A run spec from configs/ (specs whose host is in medrl.yaml first)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.uri;
}
