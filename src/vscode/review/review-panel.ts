import type { Ctx } from '../ctx';
import { openWebviewPanel } from '../webview/webview-panel';
import { fromWebview, toWebview, type FromWebview, type ToWebview, type CriterionMsg } from '../../protocol/review';
import type { ReplaySession } from '../../core/episodes/replay-session';
import type { Host } from '../../core/remote/host';
import { errorMessage } from '../../core/errors/located-error';
import { maskString, maskStrings, maskTurns } from '../../core/phi/mask-text';
import { episodeHash, episodeKeyId, VERDICTS, type EpisodeKey, type ReviewRecord } from '../../core/review/review-record';
import { appendReview } from '../../core/review/review-store';

/** One clinician's review queue on one run: the episodes to review, in order, and what is already on record. */
export interface ReviewQueue {
  host: Host;
  runDir: string;
  /** host:dir, for the page's title line. */
  source: string;
  title: string;
  reviewer: string;
  rubric: CriterionMsg[];
  session: ReplaySession;
  keys: EpisodeKey[];
  /** The sha256 of each queued episode's prompt + response (unmasked), by position. */
  hashes: string[];
  /** This reviewer's latest review per episode id (any hash: a stale one no longer counts as done). */
  latest: Map<string, ReviewRecord>;
}

/**
 * The review page: one episode of the queue at a time, blind. An `item` message carries the turns, ground truth and data
 * source only; the score, advantage, group and the reward's other keys (judge scores among them) leave the extension host
 * in a `reveal` message, posted once the reviewer gave the verdict for that episode (or had already saved one).
 */
export function openReviewPanel(ctx: Ctx, queue: ReviewQueue, onAgreement: () => void, onOpenEpisode: (k: EpisodeKey) => void): void {
  const review = new Review(ctx, queue, onAgreement, onOpenEpisode);
  const { panel, post } = openWebviewPanel(ctx, {
    viewType: 'medrl.review',
    title: queue.title,
    bundle: 'review',
    toWebview,
    fromWebview,
    retainContextWhenHidden: true,
    // The page asks for its episode again itself.
    phiMask: { mask: maskReviewMessage },
    onMessage: (msg) => review.onMessage(msg),
  });
  review.post = post;
  panel.onDidDispose(() => (review.disposed = true));
}

/** The text of a message masked: turns, ground truth, the revealed reward keys, the reviewer's own note, errors. */
function maskReviewMessage(m: ToWebview): ToWebview {
  switch (m.type) {
    case 'item': {
      const e = m.episode;
      const turns = maskTurns(e.turns);
      return {
        ...m,
        episode: { ...e, turns, groundTruth: maskString(e.groundTruth) },
        saved: m.saved && { ...m.saved, note: maskString(m.saved.note) },
      };
    }
    case 'reveal':
      return { ...m, revealed: { ...m.revealed, extra: maskStrings(m.revealed.extra) } };
    case 'error':
      return { ...m, message: maskString(m.message) };
    default:
      return m;
  }
}

class Review {
  post: (msg: ToWebview) => void = () => {};
  disposed = false;
  /** Positions whose verdict the page has: their hidden fields may be posted. */
  private readonly unblinded = new Set<number>();

  constructor(
    private readonly ctx: Ctx,
    private readonly q: ReviewQueue,
    private readonly onAgreement: () => void,
    private readonly onOpenEpisode: (k: EpisodeKey) => void,
  ) {}

  async onMessage(msg: FromWebview): Promise<void> {
    try {
      await this.answer(msg);
    } catch (err) {
      if (this.disposed) return;
      this.post({ type: 'error', message: errorMessage(err) });
      throw err;
    }
  }

  /** The review on record for a position, if it is for the episode's current text. */
  private saved(position: number): ReviewRecord | undefined {
    const r = this.q.latest.get(episodeKeyId(this.q.keys[position]!));
    return r && r.hash === this.q.hashes[position] ? r : undefined;
  }

  private done(): number {
    return this.q.keys.reduce((n, _k, i) => n + (this.saved(i) ? 1 : 0), 0);
  }

  private async answer(msg: FromWebview): Promise<void> {
    const q = this.q;
    switch (msg.type) {
      case 'ready':
        this.post({ type: 'init', title: q.title, source: q.source, reviewer: q.reviewer, rubric: q.rubric, total: q.keys.length });
        return;
      case 'go': {
        const n = q.keys.length;
        const from = msg.after !== undefined ? msg.after + 1 : 0;
        const position = msg.position ?? [...Array(n).keys()].map((i) => (from + i) % n).find((i) => !this.saved(i)) ?? -1;
        if (position < 0 || position >= q.keys.length) {
          this.post({ type: 'finished', done: this.done(), total: q.keys.length });
          return;
        }
        await this.show(position);
        return;
      }
      case 'verdict':
        this.check(msg.position);
        this.unblinded.add(msg.position);
        await this.reveal(msg.position);
        return;
      case 'save': {
        this.check(msg.position);
        if (!VERDICTS.includes(msg.verdict)) throw new Error(`not a verdict: ${msg.verdict}`);
        const names = new Set(q.rubric.map((c) => c.name));
        const scores = Object.fromEntries(Object.entries(msg.scores).filter(([k]) => names.has(k)));
        const record: ReviewRecord = {
          episode: q.keys[msg.position]!,
          hash: q.hashes[msg.position]!,
          verdict: msg.verdict,
          scores,
          note: msg.note,
          reviewer: q.reviewer,
          time: new Date().toISOString(),
        };
        await appendReview(q.host, q.runDir, record);
        q.latest.set(episodeKeyId(record.episode), record);
        this.unblinded.add(msg.position);
        // Never the note or the episode: which episode, and the verdict.
        this.ctx.log.info(`review: ${q.reviewer} ${episodeKeyId(record.episode)} ${record.verdict} (${q.host.name}:${q.runDir})`);
        this.post({ type: 'saved', position: msg.position, done: this.done(), total: q.keys.length });
        return;
      }
      case 'agreement':
        this.onAgreement();
        return;
      case 'openEpisode':
        this.onOpenEpisode(msg.episode);
        return;
    }
  }

  private check(position: number): void {
    if (position >= this.q.keys.length) throw new Error(`no episode ${position + 1} in a queue of ${this.q.keys.length}`);
  }

  private async show(position: number): Promise<void> {
    const key = this.q.keys[position]!;
    const ep = await this.q.session.episode({ collection: key.set, step: key.step }, key.index);
    const saved = this.saved(position);
    this.post({
      type: 'item',
      position,
      total: this.q.keys.length,
      done: this.done(),
      episode: { key, turns: ep.turns, groundTruth: ep.groundTruth, dataSource: ep.dataSource, location: ep.location },
      saved: saved ? { verdict: saved.verdict, scores: saved.scores, note: saved.note } : null,
    });
    if (saved || this.unblinded.has(position)) await this.reveal(position);
  }

  private async reveal(position: number): Promise<void> {
    const key = this.q.keys[position]!;
    const ep = await this.q.session.episode({ collection: key.set, step: key.step }, key.index);
    this.post({
      type: 'reveal',
      position,
      revealed: {
        key,
        score: ep.score,
        advantage: ep.advantage,
        group: ep.group && { group: ep.group.group, size: ep.group.size, mean: ep.group.mean, std: ep.group.std },
        extra: ep.extra,
      },
    });
  }
}

/** The hash of each queued episode, read unmasked and whole from its dump. */
export async function queueHashes(session: ReplaySession, keys: EpisodeKey[]): Promise<string[]> {
  const out: string[] = [];
  for (const k of keys) {
    const ep = await session.file({ collection: k.set, step: k.step }).read(k.index);
    out.push(episodeHash(ep.raw));
  }
  return out;
}
