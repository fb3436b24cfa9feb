import * as vscode from 'vscode';
import { pickRunSpec } from './pickers';
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
