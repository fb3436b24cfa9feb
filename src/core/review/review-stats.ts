import { cohenKappa, fleissKappa, type Confusion } from './agreement';
import { latestReviews } from './review-store';
import { episodeKeyId, type EpisodeKey, type ReviewRecord } from './review-record';

/** What the run's files say about a reviewed episode now. */
export interface EpisodeFacts {
  hash: string;
  score: number | null;
  dataSource: string | null;
}

/** Two raters on the episodes both rated: a reviewer against another, the training reward (`reward`) or `judge:<name>`. */
export interface RaterPair {
  a: string;
  b: string;
  n: number;
  kappa: number | null;
  agree: number | null;
  /** `pf`: `a` passed it, `b` failed it. */
  confusion: Confusion;
  disagreements: EpisodeKey[];
}

export interface ReviewStats {
  /** Reviews in force per reviewer (the latest per episode, stale ones included). */
  reviewers: Record<string, number>;
  pairs: RaterPair[];
  /** Fleiss' κ over the episodes every reviewer rated, with three or more reviewers. */
  fleiss?: { n: number; raters: number; kappa: number | null };
  /** Reviews of an episode whose prompt or response changed since (or that is gone): left out of every κ. */
  stale: Array<EpisodeKey & { reviewer: string }>;
}

/** A rater's pass/fail per episode id. */
type Ratings = Map<string, { key: EpisodeKey; pass: boolean }>;

/** A reviewer passes an episode only when it is fully correct: partial, incorrect and unsafe all fail. */
export function reviewPasses(r: ReviewRecord): boolean {
  return r.verdict === 'correct';
}

/** `a`'s reviews against `b`'s pass/fail on the same episodes. */
function pair(a: string, b: string, ra: Ratings, rb: Map<string, boolean>): RaterPair {
  const keys: EpisodeKey[] = [];
  const pa: boolean[] = [];
  const pb: boolean[] = [];
  for (const [id, x] of ra) {
    const y = rb.get(id);
    if (y === undefined) continue;
    keys.push(x.key);
    pa.push(x.pass);
    pb.push(y);
  }
  const k = cohenKappa(pa, pb);
  return { a, b, ...k, disagreements: keys.filter((_, i) => pa[i] !== pb[i]) };
}

/**
 * Agreement on a run's reviews: every pair of reviewers, each reviewer against the training reward (pass = score ≥
 * `threshold`) and against each judge (the same threshold), Fleiss' κ with three or more reviewers, and the stale reviews.
 * Only the latest review per reviewer and episode counts.
 */
export function reviewStats(input: {
  reviews: ReviewRecord[];
  episodes: Map<string, EpisodeFacts>;
  judges: Record<string, Map<string, number | null>>;
  threshold: number;
}): ReviewStats {
  const reviewers: Record<string, number> = {};
  const stale: ReviewStats['stale'] = [];
  const byReviewer = new Map<string, Ratings>();
  for (const r of latestReviews(input.reviews)) {
    reviewers[r.reviewer] = (reviewers[r.reviewer] ?? 0) + 1;
    const id = episodeKeyId(r.episode);
    if (input.episodes.get(id)?.hash !== r.hash) {
      stale.push({ ...r.episode, reviewer: r.reviewer });
      continue;
    }
    if (!byReviewer.has(r.reviewer)) byReviewer.set(r.reviewer, new Map());
    byReviewer.get(r.reviewer)!.set(id, { key: r.episode, pass: reviewPasses(r) });
  }
  const names = Object.keys(reviewers).sort();
  const ratings = (name: string): Ratings => byReviewer.get(name) ?? new Map();
  const passes = (r: Ratings) => new Map([...r].map(([id, x]) => [id, x.pass]));
  // A score counts only for an episode whose current facts are known; no score (or a judge that failed) is left out.
  const scored = (score: (id: string) => number | null | undefined) => {
    const out = new Map<string, boolean>();
    for (const id of input.episodes.keys()) {
      const s = score(id);
      if (typeof s === 'number') out.set(id, s >= input.threshold);
    }
    return out;
  };
  const reward = scored((id) => input.episodes.get(id)!.score);
  const judges = Object.entries(input.judges)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([name, scores]) => [`judge:${name}`, scored((id) => scores.get(id))] as const);
  const pairs: RaterPair[] = [];
  names.forEach((a, i) => names.slice(i + 1).forEach((b) => pairs.push(pair(a, b, ratings(a), passes(ratings(b))))));
  for (const a of names) {
    pairs.push(pair(a, 'reward', ratings(a), reward));
    for (const [b, r] of judges) pairs.push(pair(a, b, ratings(a), r));
  }
  const out: ReviewStats = { reviewers, pairs, stale };
  if (names.length >= 3) {
    const all = [...ratings(names[0]!).keys()].filter((id) => names.every((n) => ratings(n).has(id)));
    out.fleiss = fleissKappa(all.map((id) => names.map((n) => ratings(n).get(id)!.pass)));
  }
  return out;
}
