import * as vscode from 'vscode';
import type { WorkspaceConfigState } from './config/workspace-config-state';

/**
 * A line of text in a view instead of its content (medrl.yaml's problems, a trust notice, a folder that cannot be read).
 * Every view's node type includes it; its item is built where the message is known.
 */
export interface MessageNode {
  kind: 'message';
  item: vscode.TreeItem;
}

/**
 * What a view shows at its root in an untrusted workspace:
 * - 'content': its usual nodes (they need no host); the nodes that would reach a host show an untrustedNode instead;
 * - 'welcome': nothing, so the view's welcome text (package.json viewsWelcome, `!isWorkspaceTrusted`) says what trust
 *   unlocks, with a button that opens Manage Workspace Trust.
 */
export type WhenUntrusted = 'content' | 'welcome';

/**
 * The one gate in front of every MedRL view's root: while medrl.yaml is invalid, the node that opens its problems; in an
 * untrusted workspace, what `whenUntrusted` says. Undefined: the view shows its content.
 */
export function treeGate(state: WorkspaceConfigState, whenUntrusted: WhenUntrusted): MessageNode[] | undefined {
  const problem = configProblemItem(state);
  if (problem) return [{ kind: 'message', item: problem }];
  if (vscode.workspace.isTrusted || whenUntrusted === 'content') return undefined;
  return [];
}

/** The node shown where a view would reach a host in an untrusted workspace; a click opens Manage Workspace Trust. */
export function untrustedNode(label: string, opts: { icon: string; description?: string }): MessageNode {
  const item = messageItem(label, opts.icon);
  if (opts.description !== undefined) item.description = opts.description;
  item.tooltip = 'This folder is in Restricted Mode: MedRL Studio reaches no host and runs nothing here. Click to manage workspace trust.';
  item.command = { command: 'workbench.trust.manage', title: 'Manage Workspace Trust' };
  return { kind: 'message', item };
}

/** A plain message item: a label and an icon. */
export function messageItem(label: string, icon: string): vscode.TreeItem {
  const item = new vscode.TreeItem(label);
  item.iconPath = new vscode.ThemeIcon(icon);
  return item;
}

/** The item a view shows instead of its content while medrl.yaml is invalid: it opens the Problems panel. */
function configProblemItem(state: WorkspaceConfigState): vscode.TreeItem | undefined {
  if (!state.uri || state.config || state.problems.length === 0) return undefined;
  const errors = state.problems.filter((p) => p.severity === 'error');
  const item = new vscode.TreeItem(`medrl.yaml has ${errors.length} error(s)`);
  item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
  item.description = errors[0] ? `line ${errors[0].line ?? '?'}: ${errors[0].message}` : undefined;
  item.tooltip = errors.map((p) => `line ${p.line ?? '?'}${p.field ? ` ${p.field}` : ''}: ${p.message}`).join('\n');
  item.command = { command: 'workbench.actions.view.problems', title: 'Show Problems' };
  return item;
}
