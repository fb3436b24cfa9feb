import * as vscode from 'vscode';
import { createDemo } from '../../core/demo/create-demo';
import { STARTER_CONFIG } from '../../core/config/starter-config';
import type { CommandTable, Deps } from '../deps';

export const DEMO_COMMANDS: CommandTable = {
  'medrl.openDemo': openDemoCommand,
  'medrl.initWorkspace': initWorkspaceCommand,
};

/** Copies the demo workspace into the extension's storage (refreshing it) and opens it. */
export function openDemoCommand({ ctx }: Deps) {
  return async (): Promise<void> => {
    const target = vscode.Uri.joinPath(ctx.extension.globalStorageUri, 'demo');
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'MedRL: preparing the demo workspace' },
      () => createDemo(ctx.extension.extensionUri.fsPath, target.fsPath),
    );
    ctx.log.info(`demo workspace ${result.refreshed ? 'refreshed' : 'created'} in ${result.dir} (${result.files.length} files)`);
    await vscode.commands.executeCommand('vscode.openFolder', target, { forceNewWindow: false });
  };
}

/** Writes the starter medrl.yaml at the workspace's top (unless there is one) and opens it. */
export function initWorkspaceCommand({ ctx, state }: Deps) {
  return async (): Promise<void> => {
    const root = state.root;
    if (!root) {
      void vscode.window.showWarningMessage('MedRL: open a folder first; medrl.yaml lives at its top.');
      return;
    }
    const uri = vscode.Uri.joinPath(root, 'medrl.yaml');
    try {
      await vscode.workspace.fs.stat(uri);
      void vscode.window.showInformationMessage('MedRL: medrl.yaml exists already; opening it.');
    } catch (err) {
      if (!(err instanceof vscode.FileSystemError && err.code === 'FileNotFound')) throw err;
      await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(STARTER_CONFIG));
      ctx.log.info(`wrote ${uri.fsPath}`);
    }
    await vscode.window.showTextDocument(uri);
    await state.reload();
  };
}
