import { discoverEpisodes, type EpisodeCollection } from '../episodes/discover';
import { episodeSample } from '../episodes/episode-sample';
import type { Episode } from '../episodes/episode';
import { judgeSamples, type JudgeScorer } from '../judge/judge-scorer';
import type { Host } from '../remote/host';
import type { ReviewExportRow } from './review-export';
import type { QueueCandidate } from './review-queue';
import { episodeHash, episodeKeyId, type EpisodeKey } from './review-record';
import { latestReviews, readReviews, type MalformedReview } from './review-store';
import { reviewPasses, reviewStats, type EpisodeFacts, type ReviewStats } from './review-stats';

export interface RunReviews {
  stats: ReviewStats;
  /** One row per review in force, for the CSV export. */
  rows: ReviewExportRow[];
  malformed: MalformedReview[];
  /** Episodes each judge could not score (its answer failed or did not parse): left out of that judge's κ. */
  judgeFailures: Record<string, number>;
}

/** The episode a review points at, read with one range read; undefined when the set, step or index is not there (any more). */
async function readEpisode(collections: EpisodeCollection[], key: EpisodeKey): Promise<Episode | undefined> {
  const file = collections.find((c) => c.name === key.set)?.files.find((f) => f.step === key.step);
  if (!file) return undefined;
  return file.read(key.index).catch((err: unknown) => {
    // Gone (the dump is shorter now) or unreadable: the review is stale either way.
    if (err instanceof RangeError || (err as Error).name === 'MalformedRecordError') return undefined;
    throw err;
  });
}

/** Every episode of a collection as a queue candidate (its step files indexed, in one pass each), for `sampleQueue`. */
export async function queueCandidates(collection: EpisodeCollection, signal?: AbortSignal): Promise<QueueCandidate[]> {
  const out: QueueCandidate[] = [];
  for (const file of collection.files) {
    const t = await file.index({ signal });
    for (let i = 0; i < t.length; i++) {
      const score = t.score[i]!;
      out.push({
        set: collection.name,
        step: file.step,
        index: i,
        dataSource: t.str(t.dataSource[i]!) ?? null,
        score: Number.isNaN(score) ? null : score,
      });
    }
  }
  return out;
}

/**
 * A run's reviews with everything they are compared with: reads `<runDir>/reviews/`, finds each reviewed episode in the
 * run's dumps (its hash, training score and data source), asks each judge about the reviewed episodes (cached by the
 * judge's JudgeCache, so a second run costs no calls), and computes the agreement.
 */
export async function loadRunReviews(
  host: Host,
  runDir: string,
  opts: { threshold: number; judges?: Record<string, JudgeScorer>; signal?: AbortSignal },
): Promise<RunReviews> {
  const { records, malformed } = await readReviews(host, runDir);
  const latest = latestReviews(records);
  const collections = latest.length ? await discoverEpisodes(host, runDir) : [];
  const episodes = new Map<string, Episode>();
  for (const r of latest) {
    const id = episodeKeyId(r.episode);
    if (episodes.has(id)) continue;
    const ep = await readEpisode(collections, r.episode);
    if (ep) episodes.set(id, ep);
  }
  const facts = new Map<string, EpisodeFacts>();
  for (const [id, ep] of episodes) facts.set(id, { hash: episodeHash(ep.raw), score: ep.score, dataSource: ep.dataSource ?? null });
  const judges: Record<string, Map<string, number | null>> = {};
  const judgeFailures: Record<string, number> = {};
  const ids = [...episodes.keys()];
  for (const [name, scorer] of Object.entries(opts.judges ?? {})) {
    const results = await judgeSamples(
      scorer,
      ids.map((id) => episodeSample(episodes.get(id)!)),
      { signal: opts.signal },
    );
    judges[name] = new Map(ids.map((id, i) => [id, results[i]!.score]));
    judgeFailures[name] = results.filter((r) => r.score === null).length;
  }
  const stats = reviewStats({ reviews: records, episodes: facts, judges, threshold: opts.threshold });
  const rows: ReviewExportRow[] = latest.map((r) => {
    const id = episodeKeyId(r.episode);
    const f = facts.get(id);
    return {
      reviewer: r.reviewer,
      episode: r.episode,
      dataSource: f?.dataSource ?? null,
      verdict: r.verdict,
      pass: reviewPasses(r),
      scores: r.scores,
      note: r.note,
      time: r.time,
      reward: f?.score ?? null,
      judges: Object.fromEntries(Object.entries(judges).map(([name, scores]) => [name, scores.get(id) ?? null])),
      stale: f?.hash !== r.hash,
    };
  });
  return { stats, rows, malformed, judgeFailures };
}
