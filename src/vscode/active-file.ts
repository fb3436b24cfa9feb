import * as vscode from 'vscode';

/**
 * The file the user is looking at, for a command run from the palette with no argument: the active tab's file. The tab
 * is known as soon as it opens, while `activeTextEditor` comes later (after the file is loaded) and never for a file
 * shown in a custom or binary editor (a .parquet), so the tab is asked first.
 */
export function activeFileUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input instanceof vscode.TabInputText || input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputNotebook) return input.uri;
  return vscode.window.activeTextEditor?.document.uri;
}
