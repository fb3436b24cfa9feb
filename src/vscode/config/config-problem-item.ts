import * as vscode from 'vscode';
import type { WorkspaceConfigState } from './workspace-config-state';

/** The tree item a view shows instead of its content while medrl.yaml is invalid: it opens the Problems panel. */
export function configProblemItem(state: WorkspaceConfigState): vscode.TreeItem | undefined {
  if (!state.uri || state.config || state.problems.length === 0) return undefined;
  const errors = state.problems.filter((p) => p.severity === 'error');
  const item = new vscode.TreeItem(`medrl.yaml has ${errors.length} error(s)`);
  item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
  item.description = errors[0] ? `line ${errors[0].line ?? '?'}: ${errors[0].message}` : undefined;
  item.tooltip = errors.map((p) => `line ${p.line ?? '?'}${p.field ? ` ${p.field}` : ''}: ${p.message}`).join('\n');
  item.command = { command: 'workbench.actions.view.problems', title: 'Show Problems' };
  return item;
}
