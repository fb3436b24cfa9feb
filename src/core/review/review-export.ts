import { csvCell } from '../format/csv-cell';
import type { EpisodeKey, Verdict } from './review-record';
import type { ReviewStats } from './review-stats';

/** One review in force, joined with what the run and the judges say about its episode. */
export interface ReviewExportRow {
  reviewer: string;
  episode: EpisodeKey;
  dataSource: string | null;
  verdict: Verdict;
  pass: boolean;
  scores: Record<string, number>;
  note: string;
  time: string;
  /** The training reward; null when the dump has none or the episode is gone. */
  reward: number | null;
  /** Each judge's score by judge name (null: the judge gave none). */
  judges: Record<string, number | null>;
  /** The episode changed (or is gone) since the review. */
  stale: boolean;
}

/**
 * The reviews as CSV for a paper (RFC 4180): reviewer, episode, data source, verdict and pass, one column per rubric
 * criterion and per judge (the union over the rows, sorted), note, time, training reward, stale.
 */
export function reviewsCsv(rows: ReviewExportRow[]): string {
  const criteria = [...new Set(rows.flatMap((r) => Object.keys(r.scores)))].sort();
  const judges = [...new Set(rows.flatMap((r) => Object.keys(r.judges)))].sort();
  const header = [
    'reviewer',
    'set',
    'step',
    'index',
    'data_source',
    'verdict',
    'pass',
    ...criteria,
    'note',
    'time',
    'reward',
    ...judges.map((j) => `judge:${j}`),
    'stale',
  ];
  const lines = rows.map((r) =>
    [
      r.reviewer,
      r.episode.set,
      r.episode.step,
      r.episode.index,
      r.dataSource,
      r.verdict,
      r.pass,
      ...criteria.map((c) => r.scores[c]),
      r.note,
      r.time,
      r.reward,
      ...judges.map((j) => r.judges[j]),
      r.stale,
    ]
      .map(csvCell)
      .join(','),
  );
  // CRLF, as RFC 4180 has it: a line break inside a quoted note stays apart from the record ends.
  return [header.map(csvCell).join(','), ...lines].map((l) => `${l}\r\n`).join('');
}

function num(x: number | null, digits: number): string {
  return x === null ? '–' : x.toFixed(digits);
}

/** The κ table as Markdown: one row per pair, then Fleiss' κ and the stale count. */
export function kappaMarkdown(stats: ReviewStats): string {
  const out = ['| rater A | rater B | n | κ | agreement |', '| --- | --- | ---: | ---: | ---: |'];
  for (const p of stats.pairs) out.push(`| ${p.a} | ${p.b} | ${p.n} | ${num(p.kappa, 2)} | ${num(p.agree, 2)} |`);
  if (stats.fleiss)
    out.push('', `Fleiss' κ over ${stats.fleiss.n} episodes rated by all ${stats.fleiss.raters} reviewers: ${num(stats.fleiss.kappa, 2)}`);
  if (stats.stale.length) out.push('', `${stats.stale.length} stale review(s) left out (the episode changed since).`);
  return `${out.join('\n')}\n`;
}
