import * as vscode from 'vscode';
import { detectRewardFunctions } from '../../core/reward/detect-functions';
import type { HostPool } from '../../core/remote/host-pool';
import type { Ctx } from '../ctx';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { registerJudgeKeyCommand } from './judge-keys';
import { RewardPlayground, type PlaygroundArgs } from './playground-panel';

/** "Test in playground" above every verl or TRL reward function in a Python file. */
class RewardCodeLens implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    return detectRewardFunctions(doc.getText()).map((f) => new vscode.CodeLens(new vscode.Range(f.line, 0, f.line, 0), {
      title: `$(beaker) Test in playground (${f.kind})`,
      command: 'medrl.openRewardPlayground',
      arguments: [{ fn: { path: doc.uri.fsPath, name: f.name } } satisfies PlaygroundArgs],
    }));
  }
}

export function registerRewardPlayground(ctx: Ctx, state: WorkspaceConfigState, pool: HostPool): void {
  const playground = new RewardPlayground(ctx, state, pool);
  ctx.push(playground, vscode.languages.registerCodeLensProvider({ language: 'python', scheme: 'file' }, new RewardCodeLens()));
  ctx.command('medrl.openRewardPlayground', (arg?: PlaygroundArgs | vscode.Uri) => {
    // From the explorer or an editor title: a Python file is the function to test.
    if (arg instanceof vscode.Uri) return playground.open({ fn: { path: arg.fsPath } });
    return playground.open(arg && typeof arg === 'object' ? arg : undefined);
  });
  // Back-test: a run ref from another feature ({ host, dir }), or a local run folder picked here.
  ctx.command('medrl.backtestReward', async (arg?: { host?: string; dir?: string }) => {
    let run = arg?.dir ? { host: arg.host ?? 'local', dir: arg.dir } : undefined;
    if (!run) {
      const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, title: 'Run folder to back-test (its rollouts/*.jsonl)', defaultUri: state.root });
      if (!picked?.[0]) return;
      run = { host: 'local', dir: picked[0].fsPath };
    }
    playground.open({ run });
  });
  registerJudgeKeyCommand(ctx, state);
}
