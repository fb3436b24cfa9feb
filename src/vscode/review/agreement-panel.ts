import * as vscode from 'vscode';
import { posix } from 'node:path';
import type { Deps } from '../deps';
import { openWebviewPanel } from '../webview/webview-panel';
import { fromWebview, toWebview, type FromWebview, type ToWebview } from '../../protocol/review-agreement';
import { loadReviews } from './load-reviews';
import { errorMessage } from '../../core/errors/located-error';

/**
 * The review agreement page of a run: κ between its reviewers, the reward (pass at `threshold`) and the judges whose scores
 * the dumps hold; a disagreement opens that episode in the replay. Numbers and episode keys only reach the page.
 */
export async function openAgreementPanel(deps: Deps, run: { host: string; dir: string }, threshold: number): Promise<void> {
  const { ctx } = deps;
  const title = `Review agreement: ${posix.basename(run.dir)}`;
  let post: (m: ToWebview) => void = () => {};
  const load = async (): Promise<void> => {
    post({ type: 'loading' });
    try {
      const r = await loadReviews(deps, run, threshold);
      post({
        type: 'agreement',
        title,
        source: `${run.host}:${run.dir}`,
        agreement: {
          reviewers: r.stats.reviewers,
          pairs: r.stats.pairs,
          fleiss: r.stats.fleiss ?? null,
          stale: r.stats.stale.length,
          malformed: r.malformed.length,
          threshold,
        },
      });
    } catch (err) {
      ctx.log.error(`review agreement of ${run.host}:${run.dir}: ${errorMessage(err)}`);
      post({ type: 'error', message: errorMessage(err) });
    }
  };
  const onMessage = async (msg: FromWebview): Promise<void> => {
    switch (msg.type) {
      case 'ready':
      case 'refresh':
        await load();
        return;
      case 'openEpisode':
        await vscode.commands.executeCommand('medrl.openEpisodeReplay', { ...run, episode: msg.episode });
        return;
    }
  };
  const panel = openWebviewPanel(ctx, {
    viewType: 'medrl.reviewAgreement',
    title,
    bundle: 'review-agreement',
    toWebview,
    fromWebview,
    onMessage,
  });
  post = panel.post;
}
