import { z } from 'zod';
import { phiMaskState, setPhiMask } from './phi-mask';

/** Messages between the reward playground webview and the extension (validated on both sides). */

const chatMessage = z.object({ role: z.string(), content: z.string() });

const sampleSchema = z.object({
  data_source: z.string(),
  solution_str: z.string(),
  ground_truth: z.unknown(),
  extra_info: z.unknown().optional(),
  prompt: z.union([z.string(), z.array(chatMessage)]).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  trainingScore: z.number().optional(),
  expected: z.number().optional(),
});

const resultSchema = z.object({
  index: z.int().min(0),
  score: z.number().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  traceback: z.string().nullable().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  raw: z.string().optional(),
  latencyMs: z.number(),
  attempts: z.int().optional(),
  cached: z.boolean().optional(),
});

const scorerRefSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('function'), path: z.string(), name: z.string().optional() }),
  z.object({ kind: z.literal('judge'), name: z.string() }),
]);

const sideSchema = z.enum(['a', 'b']);

const functionEntrySchema = z.object({ path: z.string(), name: z.string(), kind: z.enum(['verl', 'trl']), label: z.string() });
/** A host of the workspace's pool (medrl.yaml `hosts:`, `local` built in) that reward functions can run on. */
const hostEntrySchema = z.object({ name: z.string().min(1), kind: z.enum(['local', 'ssh']) });
const judgeEntrySchema = z.object({
  name: z.string(),
  model: z.string(),
  url: z.string(),
  temperature: z.number(),
  seed: z.number().optional(),
  parser: z.string(),
});

const agreementSchema = z.object({
  n: z.int(),
  missing: z.int(),
  pearson: z.number().nullable(),
  kappa: z.number().nullable(),
  agreement: z.number().nullable(),
  threshold: z.number(),
  disagreements: z.array(z.int()),
});

export const toPlayground = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    functions: z.array(functionEntrySchema),
    judges: z.array(judgeEntrySchema),
    hosts: z.array(hostEntrySchema).min(1),
    /** The host reward functions run on unless another is picked (medrl.yaml `defaults.host`). */
    host: z.string().min(1),
    selected: scorerRefSchema.optional(),
    trusted: z.boolean(),
  }),
  /** The samples, and the results scored on them so far when they are sent again (masking turned on or off). */
  z.object({
    type: z.literal('samples'),
    samples: z.array(sampleSchema),
    source: z.string(),
    problems: z.array(z.string()),
    results: z.object({ a: z.array(resultSchema), b: z.array(resultSchema) }).optional(),
  }),
  z.object({ type: z.literal('runStarted'), sides: z.array(sideSchema), labels: z.record(z.string(), z.string()), total: z.int() }),
  z.object({ type: z.literal('results'), side: sideSchema, results: z.array(resultSchema), done: z.int(), total: z.int() }),
  z.object({
    type: z.literal('runDone'),
    cancelled: z.boolean(),
    agreement: agreementSchema.nullable(),
    against: z.enum(['b', 'training']).nullable(),
    casesChecked: z.boolean(),
  }),
  z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), message: z.string() }),
  phiMaskState,
]);

export const fromPlayground = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({
    type: z.literal('run'),
    a: scorerRefSchema,
    b: scorerRefSchema.nullable(),
    host: z.string().min(1),
    indexes: z.array(z.int().min(0)).nullable(),
    threshold: z.number(),
    bypassCache: z.boolean(),
  }),
  z.object({ type: z.literal('cancel') }),
  z.object({ type: z.literal('pickDataset') }),
  z.object({ type: z.literal('addSample'), sample: sampleSchema }),
  z.object({ type: z.literal('setExpected'), index: z.int().min(0), expected: z.number().nullable() }),
  z.object({ type: z.literal('saveCases'), fn: scorerRefSchema }),
  z.object({ type: z.literal('loadCases'), fn: scorerRefSchema }),
  z.object({ type: z.literal('export'), format: z.enum(['csv', 'jsonl']) }),
  setPhiMask,
]);

export type ToPlayground = z.infer<typeof toPlayground>;
export type FromPlayground = z.infer<typeof fromPlayground>;
export type ScorerRef = z.infer<typeof scorerRefSchema>;
export type PlaygroundSample = z.infer<typeof sampleSchema>;
export type PlaygroundResult = z.infer<typeof resultSchema>;
