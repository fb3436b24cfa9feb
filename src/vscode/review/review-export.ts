import * as vscode from 'vscode';
import { posix } from 'node:path';
import type { Deps } from '../deps';
import { loadReviews } from './load-reviews';
import { kappaMarkdown, reviewsCsv } from '../../core/review/review-export';

/**
 * Export Reviews…: the run's reviews as CSV where the user saves it, and the κ table as Markdown beside it
 * (`<name>.kappa.md`), for a paper's tables. The files hold the reviewers' notes: they go where the user chose, nowhere else.
 */
export async function exportReviews(deps: Deps, run: { host: string; dir: string }, threshold: number): Promise<void> {
  const { ctx, state } = deps;
  const loaded = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MedRL: reading the reviews of ${run.host}:${run.dir}` },
    () => loadReviews(deps, run, threshold),
  );
  if (!loaded.rows.length) {
    void vscode.window.showInformationMessage(`MedRL: no reviews yet in ${run.host}:${run.dir} (run MedRL: Review Episodes… first).`);
    return;
  }
  const base = state.root ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = `${posix.basename(run.dir)}-reviews.csv`;
  const target = await vscode.window.showSaveDialog({
    title: 'Save the reviews as CSV (the κ table goes beside it as Markdown)',
    filters: { CSV: ['csv'] },
    ...(base ? { defaultUri: vscode.Uri.joinPath(base, name) } : {}),
  });
  if (!target) return;
  const md = target.with({ path: target.path.replace(/\.csv$/i, '') + '.kappa.md' });
  await vscode.workspace.fs.writeFile(target, Buffer.from(reviewsCsv(loaded.rows), 'utf8'));
  await vscode.workspace.fs.writeFile(md, Buffer.from(kappaMarkdown(loaded.stats), 'utf8'));
  ctx.log.info(`exported ${loaded.rows.length} review(s) of ${run.host}:${run.dir} to ${target.fsPath} and ${md.fsPath}`);
  const pick = await vscode.window.showInformationMessage(
    `MedRL: exported ${loaded.rows.length} review(s) to ${posix.basename(target.path)} and the κ table to ${posix.basename(md.path)}.`,
    'Open κ Table',
    'Open CSV',
  );
  if (pick) await vscode.window.showTextDocument(pick === 'Open CSV' ? target : md);
}
