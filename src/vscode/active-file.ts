import * as vscode from 'vscode';

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

/** The run spec a command was given (a file URI) or, from the palette, the one the user is looking at. */
export async function runSpecDocument(arg: unknown): Promise<vscode.TextDocument> {
  const uri = arg instanceof vscode.Uri ? arg : activeFileUri();
  if (!uri) throw new Error('open a run spec (configs/*.yaml) first');
  return vscode.workspace.openTextDocument(uri);
}
