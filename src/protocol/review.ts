import { z } from 'zod';
import { phiMaskState, setPhiMask } from './phi-mask';
import { turn } from './turn';

/**
 * Messages of the clinician review page (webview/review) and its host (src/vscode/review). The page is blind: an `item`
 * carries what the policy saw and wrote and never a reward, score, advantage or group; those come in `reveal`, which the
 * host posts only once the reviewer gave a verdict for that episode.
 */

export const VERDICT_NAMES = ['correct', 'partial', 'incorrect', 'unsafe'] as const;
const verdict = z.enum(VERDICT_NAMES);

const episodeKey = z.object({ set: z.string(), step: z.number().int().min(0), index: z.number().int().min(0) });

const criterion = z.object({ name: z.string(), description: z.string().optional() });

/** A review already on record for the episode (the reviewer's latest, for this very text). */
const savedReview = z.object({
  verdict,
  scores: z.record(z.string(), z.number().int().min(1).max(5)),
  note: z.string(),
});

/** What the reviewer reads: no reward, score, advantage, group or reward breakdown. */
const blindEpisode = z.object({
  key: episodeKey,
  turns: z.array(turn),
  groundTruth: z.string(),
  dataSource: z.string().nullable(),
  location: z.string(),
});

/** What was hidden, posted after the verdict. */
const revealed = z.object({
  key: episodeKey,
  score: z.number().nullable(),
  advantage: z.number().nullable(),
  group: z.object({ group: z.number(), size: z.number(), mean: z.number().nullable(), std: z.number().nullable() }).nullable(),
  /** The reward function's other keys and judge scores (`acc`, `pred`, `judge:…`), as text. */
  extra: z.record(z.string(), z.string()),
});

export const toWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    title: z.string(),
    source: z.string(),
    reviewer: z.string(),
    rubric: z.array(criterion),
    total: z.number(),
  }),
  z.object({
    type: z.literal('item'),
    position: z.number().int().min(0),
    total: z.number(),
    done: z.number(),
    episode: blindEpisode,
    saved: savedReview.nullable(),
  }),
  z.object({ type: z.literal('reveal'), position: z.number().int().min(0), revealed }),
  z.object({ type: z.literal('saved'), position: z.number().int().min(0), done: z.number(), total: z.number() }),
  z.object({ type: z.literal('finished'), done: z.number(), total: z.number() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  phiMaskState,
]);

export const fromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /**
   * Show the queue's episode at `position` (previous, next); with `after`, the first one not reviewed yet after that
   * position (round the queue); with neither, the first one not reviewed yet.
   */
  z.object({ type: z.literal('go'), position: z.number().int().min(0).optional(), after: z.number().int().min(0).optional() }),
  /** The verdict was given: the host may now reveal what was hidden. */
  z.object({ type: z.literal('verdict'), position: z.number().int().min(0), verdict }),
  z.object({
    type: z.literal('save'),
    position: z.number().int().min(0),
    verdict,
    scores: z.record(z.string().max(100), z.number().int().min(1).max(5)),
    note: z.string().max(20_000),
  }),
  z.object({ type: z.literal('agreement') }),
  z.object({ type: z.literal('openEpisode'), episode: episodeKey }),
  setPhiMask,
]);

export type ToWebview = z.infer<typeof toWebview>;
export type FromWebview = z.infer<typeof fromWebview>;
export type BlindEpisodeMsg = z.infer<typeof blindEpisode>;
export type RevealedMsg = z.infer<typeof revealed>;
export type CriterionMsg = z.infer<typeof criterion>;
export type VerdictName = z.infer<typeof verdict>;
