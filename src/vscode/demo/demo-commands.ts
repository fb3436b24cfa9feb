import * as vscode from 'vscode';
import { createDemo, DEMO_MARKER } from '../../core/demo/create-demo';
import type { Ctx } from '../ctx';
import { STARTER_CONFIG } from '../../core/config/starter-config';
import type { CommandTable, Deps } from '../deps';

export const DEMO_COMMANDS: CommandTable = {
  'medrl.openDemo': openDemoCommand,
  'medrl.initWorkspace': initWorkspaceCommand,
  'medrl.openWalkthrough': openWalkthroughCommand,
};

/** package.json contributes.walkthroughs: `<publisher>.<name>#<id>`. */
const WALKTHROUGH = 'medrl.medrl-studio#getStarted';
/** globalState key: the walkthrough opened by itself once in a demo workspace, never again (the user can reopen it). */
const WALKTHROUGH_SHOWN = 'medrl.walkthroughShownInDemo';

export function openWalkthroughCommand() {
  return async (): Promise<void> => {
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false);
  };
}

/**
 * In a demo workspace (the marker file at its top), the first time it is trusted: opens "Get started with MedRL Studio",
 * so the demo's next step is on screen. Only once per profile, and not when the user turned off
 * `workbench.welcomePage.walkthroughs.openOnInstall`.
 */
export function openWalkthroughInDemo(ctx: Ctx): void {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!root || ctx.extension.globalState.get(WALKTHROUGH_SHOWN)) return;
  // VS Code's own switch for walkthroughs that open by themselves: off, the user opens it from the Runs view or palette.
  if (!vscode.workspace.getConfiguration('workbench.welcomePage').get<boolean>('walkthroughs.openOnInstall', true)) return;
  const open = async (): Promise<void> => {
    try {
      await vscode.workspace.fs.stat(vscode.Uri.joinPath(root, DEMO_MARKER));
    } catch (err) {
      if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return;
      throw err;
    }
    await ctx.extension.globalState.update(WALKTHROUGH_SHOWN, true);
    ctx.log.info('demo workspace: opening the Get Started walkthrough');
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false);
  };
  const report = (err: unknown): void => ctx.log.error(`opening the walkthrough: ${String(err)}`);
  if (vscode.workspace.isTrusted) void open().catch(report);
  else ctx.push(vscode.workspace.onDidGrantWorkspaceTrust(() => void open().catch(report)));
}

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
