import * as vscode from 'vscode';
import { userInfo } from 'node:os';
import { basename } from 'node:path';
import type { CommandTable, Deps } from '../deps';
import { discoverEpisodes } from '../../core/episodes/discover';
import { ReplaySession } from '../../core/episodes/replay-session';
import { isTrainingRun } from '../../core/runs/run-pick';
import { REVIEWER_NAME, episodeKeyId, type EpisodeKey } from '../../core/review/review-record';
import { latestReviews, readReviews } from '../../core/review/review-store';
import { sampleQueue, type QueueCandidate } from '../../core/review/review-queue';
import { queueCandidates } from '../../core/review/run-reviews';
import { rubricCriteria } from '../../core/config/workspace-config';
import { BROWSE, pickRun } from '../pickers';
import { isRunRef } from '../runs/run-ref';
import type { RunRef } from '../../core/reward/backtest';
import { requireTrust } from '../workspace-trust';
import { openReviewPanel, queueHashes } from './review-panel';
import { openAgreementPanel } from './agreement-panel';
import { exportReviews } from './review-export';

export const REVIEW_COMMANDS: CommandTable = {
  'medrl.reviewEpisodes': reviewEpisodesCommand,
  'medrl.showReviewAgreement': showReviewAgreementCommand,
  'medrl.exportReviews': exportReviewsCommand,
};

function reviewSettings() {
  const c = vscode.workspace.getConfiguration('medrl.review');
  return {
    reviewer: c.get<string>('reviewer', '').trim(),
    queueSize: c.get<number>('queueSize', 50),
    seed: c.get<number>('seed', 1),
    threshold: c.get<number>('passThreshold', 0.5),
  };
}

/** The run from the Runs view's item, or picked from every host's training runs. */
async function runOf(deps: Deps, arg: unknown, title: string): Promise<RunRef | undefined> {
  requireTrust('Reviewing episodes on hosts');
  if (isRunRef(arg)) return { host: arg.host, dir: arg.dir };
  const run = await pickRun(deps, { title, filter: isTrainingRun });
  return run && run !== BROWSE ? { host: run.host, dir: run.record.dir } : undefined;
}

/** A user name as a reviewer name: what REVIEWER_NAME refuses becomes "-". */
function defaultReviewer(): string {
  let name = '';
  try {
    name = userInfo().username;
  } catch {
    // no user name on this system: the box starts empty
  }
  return name
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
}

async function askReviewer(): Promise<string | undefined> {
  const set = reviewSettings().reviewer;
  if (set && REVIEWER_NAME.test(set)) return set;
  const name = await vscode.window.showInputBox({
    title: 'Reviewer name',
    prompt: 'Your reviews are saved as reviews/<name>.jsonl in the run folder, on its host',
    value: defaultReviewer(),
    ignoreFocusOut: true,
    validateInput: (v) =>
      REVIEWER_NAME.test(v.trim()) ? undefined : 'Letters, digits, ".", "_" or "-" (at most 64), starting with a letter or digit',
  });
  if (!name) return undefined;
  const reviewer = name.trim();
  void vscode.window.showInformationMessage(`MedRL: review as "${reviewer}" next time without asking?`, 'Remember').then((pick) => {
    if (pick) void vscode.workspace.getConfiguration('medrl.review').update('reviewer', reviewer, vscode.ConfigurationTarget.Global);
  });
  return reviewer;
}

async function askQueueSize(): Promise<number | undefined> {
  const n = await vscode.window.showInputBox({
    title: 'How many episodes to review',
    prompt: 'A stratified sample (by step, data source and reward), the same for every reviewer of this run',
    value: String(reviewSettings().queueSize),
    ignoreFocusOut: true,
    validateInput: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 10_000 ? undefined : 'A number from 1 to 10000'),
  });
  return n === undefined ? undefined : Number(n.trim());
}

/** Every episode of the run's collections (rollouts, validation), indexed with progress, as queue candidates. */
async function candidates(
  session: ReplaySession,
  progress: vscode.Progress<{ message?: string; increment?: number }>,
  token: vscode.CancellationToken,
): Promise<QueueCandidate[]> {
  const abort = new AbortController();
  const sub = token.onCancellationRequested(() => abort.abort());
  try {
    const out: QueueCandidate[] = [];
    for (const c of session.collections) {
      if (token.isCancellationRequested) break;
      progress.report({ message: `indexing ${c.name} (${c.files.length} step file(s))`, increment: 100 / session.collections.length });
      out.push(...(await queueCandidates(c, abort.signal)));
    }
    return out;
  } finally {
    sub.dispose();
  }
}

/** Review Episodes…: a stratified, seeded queue of a run's episodes, reviewed one by one, blind, with the keyboard. */
export function reviewEpisodesCommand(deps: Deps) {
  const { ctx, pool, state } = deps;
  return async (arg?: unknown): Promise<void> => {
    const run = await runOf(deps, arg, 'Run whose episodes to review');
    if (!run) return;
    const reviewer = await askReviewer();
    if (!reviewer) return;
    const size = await askQueueSize();
    if (!size) return;
    const { seed } = reviewSettings();
    const built = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `MedRL: building the review queue of ${run.host}:${run.dir}`,
        cancellable: true,
      },
      async (progress, token) => {
        const host = await pool.get(run.host);
        const session = new ReplaySession(await discoverEpisodes(host, run.dir));
        // Cancelled: the index pass stops, and nothing opens.
        const all = await candidates(session, progress, token).catch((err: unknown) => {
          if (token.isCancellationRequested) return undefined;
          throw err;
        });
        if (!all || token.isCancellationRequested) return undefined;
        const keys = sampleQueue(all, size, seed);
        progress.report({ message: 'reading the reviews on record' });
        const hashes = await queueHashes(session, keys);
        const { records, malformed } = await readReviews(host, run.dir);
        if (malformed.length)
          ctx.log.warn(
            `reviews of ${run.host}:${run.dir}: ${malformed.length} malformed line(s), first: ${malformed[0]!.file}:${malformed[0]!.line}: ${malformed[0]!.message}`,
          );
        const latest = new Map(latestReviews(records.filter((r) => r.reviewer === reviewer)).map((r) => [episodeKeyId(r.episode), r]));
        return { host, session, keys, hashes, latest, candidates: all.length };
      },
    );
    if (!built) return;
    if (!built.keys.length) {
      void vscode.window.showInformationMessage(`MedRL: ${run.host}:${run.dir} has no episodes to review.`);
      return;
    }
    ctx.log.info(
      `review queue: ${reviewer} on ${run.host}:${run.dir}: ${built.keys.length} of ${built.candidates} episode(s), seed ${seed}`,
    );
    const rubric = rubricCriteria(state.config);
    openReviewPanel(
      ctx,
      {
        host: built.host,
        runDir: run.dir,
        source: `${run.host}:${run.dir}`,
        title: `Review: ${basename(run.dir)}`,
        reviewer,
        rubric,
        session: built.session,
        keys: built.keys,
        hashes: built.hashes,
        latest: built.latest,
      },
      () => void vscode.commands.executeCommand('medrl.showReviewAgreement', run),
      (episode: EpisodeKey) => void vscode.commands.executeCommand('medrl.openEpisodeReplay', { ...run, episode }),
    );
  };
}

/** Show Review Agreement: κ between the run's reviewers, the reward and its judges. */
export function showReviewAgreementCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const run = await runOf(deps, arg, 'Run whose review agreement to show');
    if (!run) return;
    await openAgreementPanel(deps, run, reviewSettings().threshold);
  };
}

/** Export Reviews…: the reviews as CSV and the κ table as Markdown beside it, for a paper. */
export function exportReviewsCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const run = await runOf(deps, arg, 'Run whose reviews to export');
    if (!run) return;
    await exportReviews(deps, run, reviewSettings().threshold);
  };
}
