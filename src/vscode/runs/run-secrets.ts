import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import type { CommandTable, Deps } from '../deps';
import type { ServiceKeys } from '../services/service-keys';
import { judgeApiKey } from '../reward/judge-keys';
import type { SecretSource, TokenName } from '../../core/submit/run-environment';

/** The tokens a run can get, with the commands that set and clear them (package.json contributes them, category MedRL). */
const TOKENS: { token: TokenName; label: string; set: string; clear: string }[] = [
  { token: 'HF_TOKEN', label: 'Hugging Face token', set: 'medrl.setHfToken', clear: 'medrl.clearHfToken' },
  { token: 'WANDB_API_KEY', label: 'W&B API key', set: 'medrl.setWandbApiKey', clear: 'medrl.clearWandbApiKey' },
];

const tokenKey = (t: TokenName) => `medrl.token.${t}`;

/** The extension's secrets for runs: all in SecretStorage (judge keys, the keys of services this window started, tokens). */
export function secretStorageSource(ctx: Ctx, serviceKeys: ServiceKeys): SecretSource {
  return {
    judgeKey: async (judge) => judgeApiKey(ctx, judge),
    serviceKey: (svc) => serviceKeys.get(svc),
    token: async (name) => ctx.extension.secrets.get(tokenKey(name)),
    howToSet: (what) =>
      'judge' in what
        ? `run "MedRL: Set Judge API Key" for ${what.judge}`
        : 'token' in what
          ? `run "MedRL: Set ${TOKENS.find((c) => c.token === what.token)!.label.replace(/^./, (c) => c.toUpperCase())}"`
          : `the key of service ${what.service} is kept in the VS Code window that started it: start the service again from this window`,
  };
}

type TokenCommand = (typeof TOKENS)[number];

/** MedRL: Set/Clear Hugging Face Token, Set/Clear W&B API Key: kept in SecretStorage only, handed to runs over stdin. */
export const TOKEN_COMMANDS: CommandTable = Object.fromEntries(
  TOKENS.flatMap((c) => [
    [c.set, (deps: Deps) => setTokenCommand(deps, c)],
    [c.clear, (deps: Deps) => clearTokenCommand(deps, c)],
  ]),
);

export function setTokenCommand({ ctx }: Deps, c: TokenCommand) {
  return async (): Promise<void> => {
    const value = await vscode.window.showInputBox({
      title: `${c.label} for runs (${c.token})`,
      prompt: 'Kept in VS Code SecretStorage; each run gets it as an environment variable over stdin, never in a file or a command line.',
      password: true,
      ignoreFocusOut: true,
    });
    if (!value) return;
    if (/[\r\n]/.test(value)) throw new Error(`the ${c.label} has a line break: paste it on one line`);
    await ctx.extension.secrets.store(tokenKey(c.token), value.trim());
    ctx.log.info(`${c.token}: stored`);
  };
}

export function clearTokenCommand({ ctx }: Deps, c: TokenCommand) {
  return async (): Promise<void> => {
    await ctx.extension.secrets.delete(tokenKey(c.token));
    ctx.log.info(`${c.token}: removed`);
    void vscode.window.showInformationMessage(`MedRL: the ${c.label} was removed; runs no longer get ${c.token}`);
  };
}
