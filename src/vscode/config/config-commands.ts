import * as vscode from 'vscode';
import { workspaceHosts } from '../../core/config/workspace-config';
import type { CommandTable, Deps } from '../deps';

export const CONFIG_COMMANDS: CommandTable = {
  'medrl.openConfig': openConfigCommand,
  'medrl.validateConfig': validateConfigCommand,
};

export function openConfigCommand({ state }: Deps) {
  return async (): Promise<void> => {
    const uri = state.uri;
    if (!uri) throw new Error('no workspace folder is open');
    await vscode.window.showTextDocument(uri);
  };
}

/** Reads medrl.yaml again and says whether it is valid (and, if not, its first error). */
export function validateConfigCommand({ ctx, state }: Deps) {
  return async (): Promise<void> => {
    await state.reload();
    const uri = state.uri;
    if (!uri || (!state.config && state.problems.length === 0)) {
      void vscode.window.showWarningMessage('MedRL: no medrl.yaml in this workspace.', 'Create medrl.yaml').then((p) => {
        if (p) void vscode.commands.executeCommand('medrl.initWorkspace');
      });
      return;
    }
    if (state.config) {
      const c = state.config;
      const msg = `medrl.yaml is valid: ${workspaceHosts(c).length} host(s), ${Object.keys(c.judges).length} judge(s), ${c.datasets.length} dataset root(s).`;
      ctx.log.info(msg);
      void vscode.window.showInformationMessage(`MedRL: ${msg}`);
    } else {
      const errors = state.problems.filter((p) => p.severity === 'error');
      void vscode.window
        .showErrorMessage(
          `MedRL: medrl.yaml has ${errors.length} error(s); first: line ${errors[0]?.line ?? '?'}: ${errors[0]?.message ?? ''}`,
          'Show Problems',
        )
        .then((p) => {
          if (p) void vscode.commands.executeCommand('workbench.actions.view.problems');
        });
    }
  };
}
