import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { printError, printJson, printLines, UsageError, type Command, type CommandContext } from '../command';
import type { ResolvedHost, WorkspaceConfig } from '../../core/config/workspace-config';
import { JUDGE_ENV, openJudge, type OpenedJudge } from '../../core/judge/judges';
import type { Host } from '../../core/remote/host';
import type { HostPool } from '../../core/remote/host-pool';
import { findRun } from '../../core/runs/run-catalog';
import { episodeKeyId } from '../../core/review/review-record';
import { kappaMarkdown, reviewsCsv } from '../../core/review/review-export';
import { loadRunReviews, type RunReviews } from '../../core/review/run-reviews';
import type { ReviewStats } from '../../core/review/review-stats';
import { judgeCacheDir, numberOption } from './reward';
import { openWorkspaceHosts, pickHost } from './workspace-hosts';

const OPTIONS = {
  host: { type: 'string' },
  threshold: { type: 'string' },
  config: { type: 'string', short: 'c' },
  'no-judges': { type: 'boolean' },
} as const;

const RUN_HELP = [
  'RUN: a run id (or a unique prefix of one, as medrl runs lists them) or a run folder: here, or on --host H (a host of',
  "medrl.yaml). Reviews are read from <run dir>/reviews/<reviewer>.jsonl on the run's host; the reviewed episodes from its",
  'rollout and validation dumps. A verdict passes when it is "correct" (partial, incorrect and unsafe fail); the training',
  'reward and each judge of medrl.yaml (run on the reviewed episodes, answers cached; --no-judges skips them) pass at a',
  'score >= --threshold (default 0.5). A review whose episode changed since (its prompt+response hash differs) is stale and',
  'left out of every kappa. Notes are never printed.',
].join('\n');

/** The folder RUN names and its host: a folder on --host (or here), else a run id found on the workspace's hosts. */
async function runFolder(
  ctx: CommandContext,
  ws: { config: WorkspaceConfig | undefined; pool: HostPool; hosts: ResolvedHost[] },
  run: string,
): Promise<{ host: Host; dir: string }> {
  const hostArg = ctx.values.host as string | undefined;
  if (hostArg !== undefined) {
    const entry = pickHost(ws.hosts, ws.config, hostArg);
    const host = await ws.pool.get(entry.name);
    const dir = entry.kind === 'local' ? resolve(ctx.cwd, run) : run;
    if ((await host.stat(dir).catch(() => undefined))?.kind === 'directory') return { host, dir };
    const info = await findRun(ws.pool, [entry], run);
    return { host, dir: info.record.dir };
  }
  const local = resolve(ctx.cwd, run);
  if (existsSync(local) && statSync(local).isDirectory()) return { host: await ws.pool.get('local'), dir: local };
  const info = await findRun(ws.pool, ws.hosts, run);
  return { host: await ws.pool.get(info.host), dir: info.record.dir };
}

/** Loads RUN's reviews with the judges of medrl.yaml (unless --no-judges), then closes the judges and the hosts. */
async function withRunReviews(ctx: CommandContext, work: (r: RunReviews) => Promise<number>): Promise<number> {
  const [run, ...more] = ctx.positionals;
  if (!run || more.length) throw new UsageError('give one run: its id or its folder');
  const threshold = numberOption(ctx, 'threshold', 0.5);
  const ws = await openWorkspaceHosts(ctx);
  const opened: OpenedJudge[] = [];
  try {
    const { host, dir } = await runFolder(ctx, ws, run);
    if (ws.config && !ctx.values['no-judges'])
      for (const [name, cfg] of Object.entries(ws.config.judges))
        opened.push(await openJudge(name, cfg, { pool: ws.pool, apiKey: process.env[JUDGE_ENV.apiKey], cacheDir: judgeCacheDir() }));
    const result = await loadRunReviews(host, dir, { threshold, judges: Object.fromEntries(opened.map((j) => [j.name, j.scorer])) });
    // Where a line is, and what is wrong with it: never its text (notes may name patients).
    for (const m of result.malformed) printError(ctx, `${host.kind === 'local' ? '' : `${host.name}:`}${m.file}:${m.line}: ${m.message}`);
    for (const [name, failed] of Object.entries(result.judgeFailures))
      if (failed) printError(ctx, `judge ${name}: ${failed} reviewed episode(s) got no score (left out of its kappa)`);
    return await work(result);
  } finally {
    for (const j of opened) await j.close();
    await ws.pool.dispose();
  }
}

function fixed(x: number | null, digits = 2): string {
  return x === null ? '-' : x.toFixed(digits);
}

/** The stats as a terminal table: reviewers, the pairs with n, κ and agreement, their confusion and where they differ. */
function statsLines(stats: ReviewStats): string[] {
  const names = Object.keys(stats.reviewers).sort();
  if (!names.length) return ['no reviews yet (reviews/<reviewer>.jsonl in the run folder)'];
  const lines = [`reviewers: ${names.map((n) => `${n} ${stats.reviewers[n]}`).join(', ')}`, ''];
  const rows = [
    ['rater A', 'rater B', 'n', 'kappa', 'agree'],
    ...stats.pairs.map((p) => [p.a, p.b, String(p.n), fixed(p.kappa), p.agree === null ? '-' : `${(p.agree * 100).toFixed(1)}%`]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) lines.push(r.map((cell, c) => (c >= 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  '));
  if (stats.fleiss)
    lines.push(
      '',
      `Fleiss kappa: ${fixed(stats.fleiss.kappa)} over ${stats.fleiss.n} episodes rated by all ${stats.fleiss.raters} reviewers`,
    );
  const differing = stats.pairs.filter((p) => p.disagreements.length);
  if (differing.length) lines.push('', 'where they differ (pass/pass, pass/fail, fail/pass, fail/fail; episodes):');
  for (const p of differing) {
    const ids = p.disagreements.map(episodeKeyId);
    const shown = ids.length > 10 ? `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more` : ids.join(', ');
    lines.push(`  ${p.a} vs ${p.b}: ${p.confusion.pp}/${p.confusion.pf}/${p.confusion.fp}/${p.confusion.ff}; ${shown}`);
  }
  if (stats.stale.length)
    lines.push(
      '',
      `stale: ${stats.stale.length} review(s) of episodes changed since, left out: ${stats.stale.map((s) => `${s.reviewer} ${episodeKeyId(s)}`).join(', ')}`,
    );
  return lines;
}

export const reviewStatsCommand: Command = {
  path: ['review', 'stats'],
  summary: "Clinicians' agreement on a run's reviews: Cohen's kappa per pair, Fleiss' kappa, against the reward and the judges",
  usage: 'medrl review stats RUN [--host H] [--threshold T] [--no-judges] [--config FILE_OR_DIR] [--json]',
  details: `${RUN_HELP}\n--json prints {"reviewers": {"dr-lee": 40}, "pairs": [{"a", "b", "n", "kappa", "agree", "confusion", "disagreements"}], "fleiss", "stale", "malformed", "judgeFailures"} (b: a reviewer, "reward" or "judge:<name>").\nExit code: 0, or 1 when a review line could not be read (each is listed on stderr with its file and line) or on failure.`,
  options: OPTIONS,
  async run(ctx) {
    return withRunReviews(ctx, async ({ stats, malformed, judgeFailures }) => {
      if (ctx.json) printJson(ctx, { ...stats, malformed, judgeFailures });
      else printLines(ctx, statsLines(stats));
      return malformed.length ? 1 : 0;
    });
  },
};

export const reviewExportCommand: Command = {
  path: ['review', 'export'],
  summary: "A run's reviews as CSV for a paper (with step, data source, reward and judge scores), and the kappa table as Markdown",
  usage: 'medrl review export RUN --out FILE.csv [--kappa FILE.md] [--host H] [--threshold T] [--no-judges] [--config FILE_OR_DIR]',
  details: `${RUN_HELP}\nThe CSV has one row per review in force (the latest per reviewer and episode): reviewer, set, step, index, data_source, verdict, pass, one column per rubric criterion, note, time, reward, judge:<name> per judge, stale. Both files are written here, readable by you alone (notes may name patients).`,
  options: { ...OPTIONS, out: { type: 'string', short: 'o' }, kappa: { type: 'string' } },
  async run(ctx) {
    const out = ctx.values.out as string | undefined;
    if (!out) throw new UsageError('--out FILE.csv is required');
    const kappa = ctx.values.kappa as string | undefined;
    return withRunReviews(ctx, async ({ stats, rows, malformed }) => {
      await writeFile(resolve(ctx.cwd, out), reviewsCsv(rows), { mode: 0o600 });
      if (kappa) await writeFile(resolve(ctx.cwd, kappa), kappaMarkdown(stats), { mode: 0o600 });
      printError(ctx, `${rows.length} review(s) written to ${out}${kappa ? `, the kappa table to ${kappa}` : ''}`);
      return malformed.length ? 1 : 0;
    });
  },
};
