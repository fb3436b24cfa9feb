import { z } from 'zod';

/**
 * Messages of the review agreement page (webview/review-agreement) and its host (src/vscode/review): κ per pair of raters
 * (reviewers, the reward, judges), Fleiss' κ, confusion tables and the episodes where two raters differ. Episode keys and
 * numbers only: no episode text and no notes reach this page.
 */

const episodeKey = z.object({ set: z.string(), step: z.number().int().min(0), index: z.number().int().min(0) });

const pair = z.object({
  a: z.string(),
  b: z.string(),
  n: z.number(),
  kappa: z.number().nullable(),
  agree: z.number().nullable(),
  confusion: z.object({ pp: z.number(), pf: z.number(), fp: z.number(), ff: z.number() }),
  disagreements: z.array(episodeKey),
});

const agreement = z.object({
  /** Reviews in force per reviewer. */
  reviewers: z.record(z.string(), z.number()),
  pairs: z.array(pair),
  fleiss: z.object({ n: z.number(), raters: z.number(), kappa: z.number().nullable() }).nullable(),
  /** Reviews of an episode whose text changed since (left out of κ). */
  stale: z.number(),
  malformed: z.number(),
  threshold: z.number(),
});

export const toWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agreement'), title: z.string(), source: z.string(), agreement }),
  z.object({ type: z.literal('loading') }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);

export const fromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('openEpisode'), episode: episodeKey }),
]);

export type ToWebview = z.infer<typeof toWebview>;
export type FromWebview = z.infer<typeof fromWebview>;
export type AgreementMsg = z.infer<typeof agreement>;
export type EpisodeKeyMsg = z.infer<typeof episodeKey>;
