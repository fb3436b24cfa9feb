import type * as vscode from 'vscode';

/** A view with no items yet: VS Code shows its welcome content (viewsWelcome) until a feature provides items. */
export const emptyTree: vscode.TreeDataProvider<never> = {
  getChildren: () => [],
  getTreeItem: (e: never) => e,
};
