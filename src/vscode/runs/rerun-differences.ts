import * as vscode from 'vscode';
import type { RerunRefused } from '../../core/submit/rerun-exactly';

/**
 * Why a re-run was refused, as a read-only document: `medrl-rerun-differences:/RUN_ID differences?TEXT`. The text (the
 * difference lines, as `medrl runs rerun` prints them) travels in the URI, so the provider keeps nothing.
 */
export const RERUN_DIFFERENCES_SCHEME = 'medrl-rerun-differences';

export function rerunDifferencesUri(refused: RerunRefused): vscode.Uri {
  const text = [refused.summary, '', ...refused.lines()].join('\n');
  return vscode.Uri.from({ scheme: RERUN_DIFFERENCES_SCHEME, path: `/${refused.rerunOf.id} differences`, query: text });
}

export class RerunDifferencesProvider implements vscode.TextDocumentContentProvider {
  provideTextDocumentContent(uri: vscode.Uri): string {
    return `${uri.query}\n`;
  }
}
