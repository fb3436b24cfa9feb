import * as vscode from 'vscode';

/** `medrl.phi.mask`: whether webviews that show data get identifiers masked (package.json says so to the user). */
export function phiMaskOn(): boolean {
  return vscode.workspace.getConfiguration('medrl.phi').get<boolean>('mask', true);
}

/** Writes where the value in force comes from: the workspace's settings if they set it (they win over the user's), else the user's. */
export async function setPhiMaskOn(on: boolean): Promise<void> {
  const config = vscode.workspace.getConfiguration('medrl.phi');
  const inWorkspace = config.inspect<boolean>('mask')?.workspaceValue !== undefined;
  await config.update('mask', on, inWorkspace ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
}

export function onPhiMaskChange(listener: (on: boolean) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('medrl.phi.mask')) listener(phiMaskOn());
  });
}
