import { seededRandom } from '../random/seeded-random';
import { episodeKeyId, type EpisodeKey } from './review-record';

/** An episode that may go into a review queue, with what it is stratified by. */
export interface QueueCandidate extends EpisodeKey {
  dataSource: string | null;
  score: number | null;
}

/**
 * The reward bucket of a score: none, ≤ 0 (failed or penalised), between 0 and 1 (partial credit), ≥ 1 (full marks):
 * the classes a 0/1 or graded medical reward falls into, without knowing the reward's scale.
 */
function rewardBucket(score: number | null): string {
  if (score === null) return 'none';
  return score <= 0 ? 'low' : score < 1 ? 'mid' : 'high';
}

/** Fisher–Yates with the seeded generator: the same seed gives the same order. */
function shuffle<T>(items: T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * A review queue of `n` episodes, stratified by (step, data source, reward bucket): every stratum gets one episode while
 * `n` allows (strata picked at random when `n` is smaller than their number), the rest go to strata in proportion to
 * their size (largest remainders). Deterministic for a seed whatever the candidates' order, no episode twice, and
 * shuffled so the order gives away neither the step nor the reward.
 */
export function sampleQueue(candidates: QueueCandidate[], n: number, seed: number): EpisodeKey[] {
  const rand = seededRandom(seed);
  const unique = new Map<string, QueueCandidate>();
  for (const c of candidates) unique.set(episodeKeyId(c), c);
  const strata = new Map<string, QueueCandidate[]>();
  for (const id of [...unique.keys()].sort()) {
    const c = unique.get(id)!;
    const key = JSON.stringify([c.step, c.dataSource, rewardBucket(c.score)]);
    strata.set(key, [...(strata.get(key) ?? []), c]);
  }
  const groups = [...strata.keys()].sort().map((k) => shuffle(strata.get(k)!, rand));
  const total = unique.size;
  const want = Math.max(0, Math.min(Math.floor(n), total));
  const take = new Array<number>(groups.length).fill(0);
  if (want < groups.length) {
    for (const g of shuffle([...groups.keys()], rand).slice(0, want)) take[g] = 1;
  } else {
    take.fill(1);
    // The rest in proportion to what each stratum has left, largest remainders first (ties by stratum order).
    const rest = want - groups.length;
    const left = groups.map((g) => g.length - 1);
    const leftTotal = left.reduce((s, x) => s + x, 0);
    const quota = left.map((l) => (leftTotal ? (rest * l) / leftTotal : 0));
    quota.forEach((q, g) => (take[g]! += Math.floor(q)));
    let short = want - take.reduce((s, x) => s + x, 0);
    const byRemainder = [...groups.keys()].sort((x, y) => quota[y]! - Math.floor(quota[y]!) - (quota[x]! - Math.floor(quota[x]!)) || x - y);
    for (const g of byRemainder) {
      if (short <= 0) break;
      if (take[g]! < groups[g]!.length) {
        take[g]!++;
        short--;
      }
    }
  }
  const chosen = groups.flatMap((g, i) => g.slice(0, take[i]).map(({ set, step, index }) => ({ set, step, index })));
  return shuffle(chosen, rand);
}
