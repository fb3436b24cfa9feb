import { z } from 'zod';
import { phiMaskState, setPhiMask } from './phi-mask';

/** Messages between the dataset preview webview and the extension. */

export const DatasetRow = z.object({
  index: z.number().int(),
  line: z.number().int().optional(),
  key: z.string().optional(),
  value: z.unknown().optional(),
  error: z.string().optional(),
});
export type DatasetRow = z.infer<typeof DatasetRow>;

export const DatasetProblem = z.object({
  row: z.number().int().optional(),
  line: z.number().int().optional(),
  field: z.string().optional(),
  reason: z.string(),
  severity: z.enum(['error', 'warning']),
});
export type DatasetProblem = z.infer<typeof DatasetProblem>;

const SearchMatch = z.object({ index: z.number().int(), snippet: z.string() });

export const DatasetToWebview = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('open'),
    title: z.string(),
    host: z.string(),
    path: z.string(),
    format: z.enum(['json', 'jsonl', 'parquet', 'csv']),
    size: z.number(),
    sizeLabel: z.string(),
    columns: z.array(z.string()),
    rowCount: z.number().int().optional(),
  }),
  /** Rows from `start`; `end` when the file has no rows after them. */
  z.object({ type: z.literal('rows'), start: z.number().int(), rows: z.array(DatasetRow), end: z.boolean() }),
  z.object({ type: z.literal('progress'), rows: z.number().int() }),
  /** Select and show a row (from the tree's problem items or a command). */
  z.object({ type: z.literal('goTo'), row: z.number().int().min(0) }),
  z.object({
    type: z.literal('summary'),
    kind: z.string(),
    kindLabel: z.string(),
    rows: z.number().int(),
    rowsOk: z.number().int(),
    columns: z.array(z.string()),
    dataSources: z.record(z.string(), z.number()),
    abilities: z.record(z.string(), z.number()),
    problems: z.array(DatasetProblem),
    problemCount: z.number().int(),
    maxPromptTokens: z.number().int(),
  }),
  z.object({
    type: z.literal('searchResults'),
    id: z.number().int(),
    matches: z.array(SearchMatch),
    scanned: z.number().int(),
    done: z.boolean(),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
  phiMaskState,
]);
export type DatasetToWebview = z.infer<typeof DatasetToWebview>;

export const DatasetFromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('getRows'), start: z.number().int().min(0), count: z.number().int().min(1).max(1000) }),
  z.object({ type: z.literal('search'), id: z.number().int(), query: z.string().min(1) }),
  z.object({ type: z.literal('cancelSearch'), id: z.number().int() }),
  setPhiMask,
]);
export type DatasetFromWebview = z.infer<typeof DatasetFromWebview>;
