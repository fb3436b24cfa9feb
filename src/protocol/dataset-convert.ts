import { z } from 'zod';
import { DatasetProblem } from './dataset';

/** Messages between the dataset convert form and the extension. */

export const ConvertForm = z.object({
  format: z.enum(['verl', 'verl-sft', 'trl-prompt-only', 'trl-prompt-completion', 'trl-conversational']),
  question: z.string().min(1, 'pick the question field'),
  answer: z.string().min(1, 'pick the answer field'),
  id: z.string().optional(),
  dataSource: z.string().optional(),
  dataSourceName: z.string().min(1, 'give a data_source name'),
  abilityName: z.string().min(1, 'give an ability name'),
  template: z.string().optional(),
  system: z.string().optional(),
  extra: z.array(z.string()),
  split: z.number().gt(0).lt(1).optional(),
  seed: z.number().int(),
});
export type ConvertForm = z.infer<typeof ConvertForm>;

export const WriteTarget = z.object({
  /** Folder (with a split) or file, relative to the source file's folder or absolute. */
  out: z.string().min(1),
  fileFormat: z.enum(['parquet', 'jsonl', 'json']),
  jsonlTwin: z.boolean(),
  /** Also upload the written files to this host's folder. */
  upload: z.object({ host: z.string().min(1), dir: z.string().min(1) }).optional(),
});
export type WriteTarget = z.infer<typeof WriteTarget>;

export const ConvertToWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('init'),
    source: z.string(),
    columns: z.array(z.string()),
    /** The first raw row, to show what the fields hold. */
    sample: z.unknown(),
    hosts: z.array(z.string()),
    defaults: z.object({ out: z.string(), dataSourceName: z.string() }),
  }),
  z.object({
    type: z.literal('preview'),
    rows: z.array(z.unknown()),
    rowsRead: z.number().int(),
    problems: z.array(DatasetProblem),
  }),
  z.object({
    type: z.literal('written'),
    files: z.array(z.string()),
    train: z.number().int(),
    test: z.number().int(),
    skipped: z.number().int(),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ConvertToWebview = z.infer<typeof ConvertToWebview>;

export const ConvertFromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('preview'), form: ConvertForm }),
  z.object({ type: z.literal('write'), form: ConvertForm, target: WriteTarget }),
]);
export type ConvertFromWebview = z.infer<typeof ConvertFromWebview>;
