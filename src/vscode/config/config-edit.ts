import * as vscode from 'vscode';
import { saveConfigText } from '../../core/config/load-workspace-config';

/**
 * Applies `edit` to medrl.yaml without losing what the user typed: an open editor with unsaved changes gets the edit
 * as a WorkspaceEdit on top of them (the user saves it, and undo works); otherwise the file is rewritten atomically and
 * an open, saved editor reloads it. Returns whether the edit is on disk.
 */
export async function editConfigFile(uri: vscode.Uri, edit: (text: string) => string): Promise<'saved' | 'unsaved'> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open?.isDirty) {
    const text = open.getText();
    const we = new vscode.WorkspaceEdit();
    we.replace(uri, new vscode.Range(open.positionAt(0), open.positionAt(text.length)), edit(text));
    if (!(await vscode.workspace.applyEdit(we))) throw new Error(`${vscode.workspace.asRelativePath(uri)}: the editor refused the edit`);
    return 'unsaved';
  }
  await saveConfigText(uri.fsPath, edit(new TextDecoder().decode(await vscode.workspace.fs.readFile(uri))));
  return 'saved';
}
