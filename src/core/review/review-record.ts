import { createHash } from 'node:crypto';
import { z } from 'zod';

/** What a clinician decides about one episode; only `correct` counts as a pass when κ is computed. */
export const VERDICTS = ['correct', 'partial', 'incorrect', 'unsafe'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** A reviewer's name: also the name of their file (`reviews/<reviewer>.jsonl`), so nothing a path could misread. */
export const REVIEWER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Which episode a review is about: the collection (`rollouts`, `validation`, ...), its step and its index in that step. */
export interface EpisodeKey {
  set: string;
  step: number;
  index: number;
}

/** One string per episode (`rollouts/12/3`), for maps and sets. */
export function episodeKeyId(k: EpisodeKey): string {
  return `${k.set}/${k.step}/${k.index}`;
}

export const episodeKeySchema = z.strictObject({
  set: z.string().min(1).describe('The collection: rollouts, validation, completions.'),
  step: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
});

/** One line of `<run dir>/reviews/<reviewer>.jsonl`. */
export const reviewRecordSchema = z.strictObject({
  episode: episodeKeySchema,
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected the sha256 (64 hex digits) of the episode')
    .describe("sha256 of the episode's prompt + response: a dump that changed under a review no longer matches."),
  verdict: z.enum(VERDICTS),
  scores: z
    .record(z.string().min(1), z.number().int().min(1).max(5))
    .default({})
    .describe('Rubric scores, 1 to 5, by criterion (medrl.yaml review.rubric).'),
  note: z.string().default(''),
  reviewer: z
    .string()
    .regex(REVIEWER_NAME, 'a reviewer name is letters, digits, ".", "_" or "-" (at most 64), starting with a letter or digit'),
  time: z.iso.datetime({ offset: true }),
});

export type ReviewRecord = z.output<typeof reviewRecordSchema>;

/** The hash a review keeps of what was reviewed: sha256 hex of the prompt followed by the response. */
export function episodeHash(raw: { prompt: string; response: string }): string {
  return createHash('sha256').update(raw.prompt).update(raw.response).digest('hex');
}
