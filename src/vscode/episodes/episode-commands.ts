import * as vscode from 'vscode';
import { basename } from 'node:path';
import type { CommandTable, Deps } from '../deps';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { discoverEpisodes } from '../../core/episodes/discover';
import { ReplaySession } from '../../core/episodes/replay-session';
import { openReplayPanel } from './replay-panel';
import { BROWSE, pickRun } from '../pickers';
import { isRunRef } from '../runs/run-ref';
import { isTrainingRun } from '../../core/runs/run-pick';

/**
 * What `medrl.openEpisodeReplay` accepts: a run ref (with the episode to open first, from the review agreement page), a
 * folder or file URI (explorer), or a path on the local host.
 */
type ReplayArg =
  | { host: string; dir: string; framework?: 'verl' | 'trl'; episode?: { set: string; step: number; index: number } }
  | vscode.Uri
  | string
  | undefined;

async function target(deps: Deps, arg: ReplayArg): Promise<{ host: string; path: string } | undefined> {
  if (isRunRef(arg)) return { host: arg.host, path: arg.dir };
  if (arg instanceof vscode.Uri) return { host: LOCAL_HOST, path: arg.fsPath };
  if (typeof arg === 'string' && arg) return { host: LOCAL_HOST, path: arg };
  const run = await pickRun(deps, {
    title: 'Run whose episodes to replay',
    filter: isTrainingRun,
    browse: '$(folder-opened) Browse for a folder or file of episodes…',
  });
  if (run !== BROWSE) return run && { host: run.host, path: run.record.dir };
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: true,
    canSelectFolders: true,
    canSelectMany: false,
    title: 'Open episodes: a run folder, a folder of {step}.jsonl dumps or completions parquet, or one file',
    filters: { Episodes: ['jsonl', 'parquet'] },
  });
  return picked?.[0] ? { host: LOCAL_HOST, path: picked[0].fsPath } : undefined;
}

export const EPISODE_COMMANDS: CommandTable = {
  'medrl.openEpisodeReplay': openEpisodeReplayCommand,
};

/** Finds the episode dumps at a run, folder or file and opens them in a replay panel. */
export function openEpisodeReplayCommand(deps: Deps) {
  const { ctx, pool } = deps;
  return async (arg?: ReplayArg): Promise<void> => {
    const t = await target(deps, arg);
    if (!t) return;
    if (t.host !== LOCAL_HOST && !vscode.workspace.isTrusted)
      throw new Error(`episodes on host "${t.host}": connecting to hosts needs a trusted workspace`);
    const collections = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: opening episodes at ${t.host}:${t.path}`, cancellable: true },
      async (_p, token) => {
        const host = await pool.get(t.host);
        const found = await discoverEpisodes(host, t.path);
        return token.isCancellationRequested ? undefined : found;
      },
    );
    if (!collections) return;
    const files = collections.reduce((n, c) => n + c.files.length, 0);
    ctx.log.info(`episode replay: ${t.host}:${t.path}: ${collections.map((c) => `${c.name} (${c.files.length} step file(s))`).join(', ')}`);
    const e = isRunRef(arg) ? arg.episode : undefined;
    openReplayPanel(
      ctx,
      new ReplaySession(collections),
      `Episodes: ${basename(t.path)}`,
      `${t.host}:${t.path} · ${files} step file(s)`,
      e && { collection: e.set, step: e.step, index: e.index },
    );
  };
}
