import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { openWebviewPanel } from '../webview/webview-panel';
import { fromWebview, toWebview, type ToWebview } from '../../protocol/replay';
import { ReplaySession, type StepRef } from '../../core/episodes/replay-session';
import type { EpisodeFile } from '../../core/episodes/episode-file';
import { errorMessage } from '../../core/errors/located-error';

/**
 * The episode replay panel for one source (a run, a folder, a file). The session indexes the step the user looks at first,
 * then every other step in the background (for the timeline, the signals and comparisons across steps); closing the
 * panel stops it.
 */
export function openReplayPanel(ctx: Ctx, session: ReplaySession, title: string, source: string): void {
  const abort = new AbortController();
  const indexing = new Map<EpisodeFile, Promise<void>>();
  let post: (msg: ToWebview) => void = () => {};
  let lastSteps = 0;

  const postSteps = (force = false) => {
    if (!force && Date.now() - lastSteps < 500) return;
    lastSteps = Date.now();
    post({ type: 'steps', steps: session.steps() });
  };

  const ensureIndexed = (ref: StepRef): Promise<void> => {
    const file = session.file(ref);
    let p = indexing.get(file);
    if (!p) {
      let lastProgress = 0;
      p = session
        .indexStep(ref, {
          signal: abort.signal,
          onProgress: (episodes, bytes, totalBytes) => {
            if (Date.now() - lastProgress < 300) return;
            lastProgress = Date.now();
            post({ type: 'progress', ...ref, episodes, bytes, totalBytes });
          },
        })
        .then(
          (info) => {
            if (info.malformed.length) ctx.log.warn(`${file.host.name}:${file.path}: ${info.malformed.length} malformed line(s), first: line ${info.malformed[0]!.line ?? info.malformed[0]!.row}: ${info.malformed[0]!.message}`);
            postSteps(true);
          },
          (err: unknown) => {
            if (abort.signal.aborted) return;
            ctx.log.error(`indexing ${file.host.name}:${file.path}: ${errorMessage(err)}`);
            post({ type: 'error', message: `indexing step ${ref.step} failed: ${errorMessage(err)}` });
          },
        );
      indexing.set(file, p);
    }
    return p;
  };

  let background: Promise<void> | undefined;
  const indexAll = () => {
    background ??= (async () => {
      for (const s of session.steps()) {
        if (abort.signal.aborted) return;
        await ensureIndexed(s);
      }
    })();
  };

  const { panel, post: typedPost } = openWebviewPanel(ctx, {
    viewType: 'medrl.episodeReplay',
    title,
    bundle: 'replay',
    toWebview,
    fromWebview,
    retainContextWhenHidden: true,
    onMessage: async (msg) => {
      try {
        switch (msg.type) {
          case 'ready':
            post({ type: 'init', title, source, steps: session.steps() });
            return;
          case 'query': {
            const q = msg.query;
            // The step the user looks at is indexed first; the others follow in the background.
            void ensureIndexed(q).then(indexAll);
            const page = await session.query(q, abort.signal);
            post({ type: 'page', requestId: msg.requestId, ...page });
            return;
          }
          case 'open':
            post({ type: 'episode', episode: await session.episode(msg, msg.index) });
            return;
          case 'compare':
            await ensureIndexed(msg);
            post({ type: 'compare', compare: await session.compare(msg, msg.index) });
            return;
          case 'sendToPlayground': {
            await ensureIndexed(msg);
            const samples = await session.playgroundSamples(msg, msg.index);
            if (!samples.length) {
              void vscode.window.showInformationMessage('MedRL: no episodes to send (the filter matches none).');
              return;
            }
            ctx.log.info(`sending ${samples.length} episode(s) of ${msg.collection} step ${msg.step} to the reward playground`);
            await vscode.commands.executeCommand('medrl.openRewardPlayground', { samples });
            return;
          }
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        post({ type: 'error', message: errorMessage(err) });
        throw err;
      }
    },
  });
  post = typedPost;
  panel.onDidDispose(() => abort.abort());
}
