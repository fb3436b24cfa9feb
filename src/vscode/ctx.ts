import * as vscode from 'vscode';
import { errorMessage } from '../core/errors/located-error';

/** What every feature of the extension shares: the log, the extension's folders, and disposables. */
export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('MedRL Studio', { log: true });
    this.disposables.push(this.log);
  }

  push(...d: vscode.Disposable[]): void {
    this.disposables.push(...d);
  }

  /** Registers a command whose failures are logged and shown, never swallowed. */
  command(id: string, fn: (...args: never[]) => unknown): void {
    this.push(
      vscode.commands.registerCommand(id, async (...args: never[]) => {
        try {
          return await fn(...args);
        } catch (err) {
          this.log.error(`${id}: ${errorMessage(err)}`);
          void vscode.window.showErrorMessage(`MedRL: ${errorMessage(err)}`, 'Show Log').then((pick) => {
            if (pick) this.log.show();
          });
          return undefined;
        }
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}
