import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import type { Deps } from '../deps';

const secretKey = (judge: string) => `medrl.judgeApiKey.${judge}`;

/** Judge API keys live in SecretStorage only (never settings, files, logs or command lines). */
export function judgeApiKey(ctx: Ctx, judge: string): Thenable<string | undefined> {
  return ctx.extension.secrets.get(secretKey(judge));
}

/** Sets or removes a judge's API key; the argument, when given, names the judge. */
export function setJudgeApiKeyCommand({ ctx, state }: Deps) {
  return async (arg?: string): Promise<void> => {
    const names = Object.keys(state.config?.judges ?? {});
    if (!names.length) {
      void vscode.window.showWarningMessage('MedRL: medrl.yaml has no judges: add one under judges: first.');
      return;
    }
    const judge =
      typeof arg === 'string' && names.includes(arg)
        ? arg
        : await vscode.window.showQuickPick(names, { title: 'Set the API key of which judge?' });
    if (!judge) return;
    const key = await vscode.window.showInputBox({
      title: `API key of judge "${judge}"`,
      prompt: 'Kept in VS Code SecretStorage. Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key) await ctx.extension.secrets.store(secretKey(judge), key);
    else await ctx.extension.secrets.delete(secretKey(judge));
    ctx.log.info(`judge "${judge}": API key ${key ? 'stored' : 'removed'}`);
  };
}
