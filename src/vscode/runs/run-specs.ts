import * as vscode from 'vscode';
import { fieldPosition } from '../../core/config/yaml-document';
import type { Problem } from '../../core/errors/located-error';
import { parseRunSpec } from '../../core/runs/load-run-spec';
import type { RunSpec } from '../../core/runs/run-spec';
import { toDiagnostic } from '../config/workspace-config-state';

/** The workspace's run specs (configs/*.yaml) and their problems in the Problems panel, for as long as the window lives. */
export class RunSpecs implements vscode.Disposable {
  private readonly diagnostics = vscode.languages.createDiagnosticCollection('medrl-runs');
  private readonly disposables: vscode.Disposable[];

  constructor() {
    // Specs are checked as they are opened and saved, so schema problems show before any submit.
    const check = (doc: vscode.TextDocument) => {
      if (doc.languageId === 'yaml' && /\/configs\/[^/]+\.ya?ml$/.test(doc.uri.path)) this.load(doc);
    };
    this.disposables = [
      this.diagnostics,
      vscode.workspace.onDidOpenTextDocument(check),
      vscode.workspace.onDidSaveTextDocument(check),
      vscode.workspace.onDidCloseTextDocument((d) => this.diagnostics.delete(d.uri)),
    ];
    vscode.workspace.textDocuments.forEach(check);
  }

  /** Parses a spec document; schema problems go to the Problems panel at their lines. */
  load(doc: vscode.TextDocument): { spec: RunSpec; text: string } | undefined {
    const text = doc.getText();
    const loaded = parseRunSpec(text, vscode.workspace.asRelativePath(doc.uri));
    this.diagnostics.set(doc.uri, loaded.problems.map(toDiagnostic));
    return loaded.spec ? { spec: loaded.spec, text } : undefined;
  }

  /** Problems found later (the host checks of a submit), each at its field's line in the spec's text. */
  showProblems(uri: vscode.Uri, problems: Problem[], text: string): void {
    this.diagnostics.set(
      uri,
      problems.map((p) => toDiagnostic(withLine(p, text))),
    );
  }

  dispose(): void {
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}

function withLine(p: Problem, text: string): Problem {
  return p.field && p.line === undefined ? { ...p, ...fieldPosition(text, p.field) } : p;
}
