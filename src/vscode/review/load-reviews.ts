import * as vscode from 'vscode';
import type { Deps } from '../deps';
import { openJudge, type OpenedJudge } from '../../core/judge/judges';
import { loadRunReviews, type RunReviews } from '../../core/review/run-reviews';
import { errorMessage } from '../../core/errors/located-error';
import { judgeApiKey } from '../reward/judge-keys';

/**
 * A run's reviews and their agreement, with the judges of medrl.yaml run on the reviewed episodes (keys from SecretStorage,
 * answers cached as the playground's are); a judge that cannot be opened is left out and logged. What is wrong with a
 * review line is logged by file, line and field, never its text.
 */
export async function loadReviews(deps: Deps, run: { host: string; dir: string }, threshold: number): Promise<RunReviews> {
  const { ctx, pool, state } = deps;
  const opened: OpenedJudge[] = [];
  try {
    for (const [name, cfg] of Object.entries(state.config?.judges ?? {})) {
      try {
        opened.push(
          await openJudge(name, cfg, {
            pool,
            apiKey: await judgeApiKey(ctx, name),
            cacheDir: vscode.Uri.joinPath(ctx.extension.globalStorageUri, 'judge-cache').fsPath,
          }),
        );
      } catch (err) {
        ctx.log.warn(`review agreement: judge ${name} left out: ${errorMessage(err)}`);
      }
    }
    const r = await loadRunReviews(await pool.get(run.host), run.dir, {
      threshold,
      judges: Object.fromEntries(opened.map((j) => [j.name, j.scorer])),
    });
    for (const m of r.malformed.slice(0, 20)) ctx.log.warn(`${run.host}:${m.file}:${m.line}: not a review: ${m.message}`);
    for (const [name, failed] of Object.entries(r.judgeFailures))
      if (failed) ctx.log.warn(`judge ${name}: ${failed} reviewed episode(s) got no score (left out of its κ)`);
    return r;
  } finally {
    for (const j of opened) await j.close();
  }
}
