import { z } from 'zod';
import { phiMaskState, setPhiMask } from './phi-mask';
import { turn } from './turn';

/** Messages of the episode replay webview (webview/replay) and its host (src/vscode/episodes). */

const extraValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const stepSignals = z.object({
  episodes: z.number(),
  scored: z.number(),
  meanScore: z.number().nullable(),
  groups: z.number(),
  flatGroups: z.number(),
  flatGroupShare: z.number().nullable(),
  scoreLengthCorrelation: z.number().nullable(),
  meanResponseLength: z.number(),
  empty: z.number(),
  unclosed: z.number(),
  noEos: z.number(),
  atLengthCap: z.number(),
  truncated: z.number(),
});

const stepInfo = z.object({
  collection: z.string(),
  step: z.number(),
  file: z.string(),
  indexed: z.boolean(),
  episodes: z.number(),
  malformed: z.array(z.object({ file: z.string(), line: z.number().optional(), row: z.number().optional(), message: z.string() })),
  signals: stepSignals.optional(),
});

const episodeRow = z.object({
  index: z.number(),
  score: z.number().nullable(),
  length: z.number(),
  dataSource: z.string().nullable(),
  group: z.number(),
  groupSize: z.number(),
  advantage: z.number().nullable(),
  flags: z.array(z.string()),
  extra: z.record(z.string(), extraValue),
});

const stepRef = { collection: z.string(), step: z.number() };

const episodeView = z.object({
  ...stepRef,
  index: z.number(),
  score: z.number().nullable(),
  turns: z.array(turn),
  groundTruth: z.string(),
  dataSource: z.string().nullable(),
  extra: z.record(z.string(), z.string()),
  raw: z.object({ prompt: z.string(), response: z.string() }),
  location: z.string(),
  advantage: z.number().nullable(),
  flags: z.array(z.string()),
  group: z
    .object({
      group: z.number(),
      start: z.number(),
      size: z.number(),
      mean: z.number().nullable(),
      std: z.number().nullable(),
      min: z.number().nullable(),
      max: z.number().nullable(),
      members: z.array(z.object({ index: z.number(), score: z.number().nullable(), advantage: z.number().nullable() })),
    })
    .nullable(),
});

const compareView = z.object({
  ...stepRef,
  index: z.number(),
  prompt: z.string(),
  steps: z.array(
    z.object({
      step: z.number(),
      episodes: z.array(
        z.object({
          index: z.number(),
          score: z.number().nullable(),
          advantage: z.number().nullable(),
          response: z.string(),
          flags: z.array(z.string()),
        }),
      ),
    }),
  ),
  pendingSteps: z.number(),
});

const sortColumn = z.union([
  z.enum(['index', 'score', 'length', 'dataSource', 'advantage', 'group']),
  z.templateLiteral(['extra:', z.string()]),
]);

const episodeQuery = z.object({
  ...stepRef,
  text: z.string().max(1000).optional(),
  minScore: z.number().optional(),
  maxScore: z.number().optional(),
  dataSource: z.string().optional(),
  extraKey: z.string().optional(),
  extraValue: z.string().optional(),
  flagged: z.boolean().optional(),
  sort: z.object({ column: sortColumn, desc: z.boolean() }),
  offset: z.number().int().min(0),
  count: z.number().int().min(1).max(500),
});

export const toWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    title: z.string(),
    source: z.string(),
    steps: z.array(stepInfo),
    /** The episode to open first (a review disagreement), instead of the latest step's first. */
    focus: z.object({ ...stepRef, index: z.number().int().min(0) }).optional(),
  }),
  z.object({ type: z.literal('steps'), steps: z.array(stepInfo) }),
  z.object({ type: z.literal('progress'), ...stepRef, episodes: z.number(), bytes: z.number(), totalBytes: z.number() }),
  z.object({
    type: z.literal('page'),
    requestId: z.number(),
    total: z.number(),
    all: z.number(),
    offset: z.number(),
    rows: z.array(episodeRow),
    extraKeys: z.array(z.string()),
    dataSources: z.array(z.string()),
    indexing: z.boolean(),
  }),
  z.object({ type: z.literal('episode'), episode: episodeView }),
  z.object({ type: z.literal('compare'), compare: compareView }),
  z.object({ type: z.literal('error'), message: z.string() }),
  phiMaskState,
]);

export const fromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('query'), requestId: z.number(), query: episodeQuery }),
  z.object({ type: z.literal('open'), ...stepRef, index: z.number().int().min(0) }),
  z.object({ type: z.literal('compare'), ...stepRef, index: z.number().int().min(0) }),
  z.object({ type: z.literal('sendToPlayground'), ...stepRef, index: z.number().int().min(0).optional() }),
  setPhiMask,
]);

export type ToWebview = z.infer<typeof toWebview>;
export type EpisodeQueryMsg = z.infer<typeof episodeQuery>;
export type StepInfoMsg = z.infer<typeof stepInfo>;
export type EpisodeRowMsg = z.infer<typeof episodeRow>;
export type EpisodeViewMsg = z.infer<typeof episodeView>;
export type CompareViewMsg = z.infer<typeof compareView>;
export type FromWebview = z.infer<typeof fromWebview>;
