import * as vscode from 'vscode';
import { detectRewardFunctions } from '../../core/reward/detect-functions';
import type { CommandTable, Deps } from '../deps';
import { setJudgeApiKeyCommand } from './judge-keys';
import type { PlaygroundArgs } from './playground-panel';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { BROWSE, pickRun } from '../pickers';
import { isTrainingRun } from '../../core/runs/run-pick';

/** "Test in playground" above every verl or TRL reward function in a Python file. */
class RewardCodeLens implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    return detectRewardFunctions(doc.getText()).map(
      (f) =>
        new vscode.CodeLens(new vscode.Range(f.line, 0, f.line, 0), {
          title: `$(beaker) Test in playground (${f.kind})`,
          command: 'medrl.openRewardPlayground',
          arguments: [{ fn: { path: doc.uri.fsPath, name: f.name } } satisfies PlaygroundArgs],
        }),
    );
  }
}

export const REWARD_COMMANDS: CommandTable = {
  'medrl.openRewardPlayground': openRewardPlaygroundCommand,
  'medrl.backtestReward': backtestRewardCommand,
  'medrl.setJudgeApiKey': setJudgeApiKeyCommand,
};

/** The playground's CodeLens on Python files (its commands are in REWARD_COMMANDS). */
export function registerRewardCodeLens({ ctx }: Deps): void {
  ctx.push(vscode.languages.registerCodeLensProvider({ language: 'python', scheme: 'file' }, new RewardCodeLens()));
}

export function openRewardPlaygroundCommand({ playground }: Deps) {
  return (arg?: PlaygroundArgs | vscode.Uri): void => {
    // From the explorer or an editor title: a Python file is the function to test.
    if (arg instanceof vscode.Uri) return playground.open({ fn: { path: arg.fsPath } });
    return playground.open(arg && typeof arg === 'object' ? arg : undefined);
  };
}

/** Back-test: a run ref from another feature ({ host, dir }), a run picked from every host's, or a local run folder. */
export function backtestRewardCommand(deps: Deps) {
  const { state, playground } = deps;
  return async (arg?: { host?: string; dir?: string }): Promise<void> => {
    if (arg?.dir) return playground.open({ run: { host: arg.host ?? LOCAL_HOST, dir: arg.dir } });
    const run = await pickRun(deps, {
      title: 'Run whose rollouts to back-test on',
      filter: isTrainingRun,
      browse: '$(folder-opened) Browse for a local run folder…',
    });
    if (!run) return;
    if (run !== BROWSE) return playground.open({ run: { host: run.host, dir: run.record.dir } });
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      title: 'Run folder to back-test (its rollouts/*.jsonl)',
      defaultUri: state.root,
    });
    if (picked?.[0]) playground.open({ run: { host: LOCAL_HOST, dir: picked[0].fsPath } });
  };
}
