import { basename, dirname, join } from 'node:path';
import type { Host } from '../remote/host';
import { readRows, type DatasetFormat, type DatasetReader } from './dataset-reader';
import { detectKind, promptText, ROW_SCHEMAS, type DatasetKind } from './dataset-kinds';
import { openDataset } from './open-dataset';
import { stringHash } from './string-hash';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';

export interface DatasetProblem {
  /** 0-based row; absent for a problem of the whole file. */
  row?: number;
  /** 1-based line of the row (JSON, JSONL, CSV). */
  line?: number;
  field?: string;
  reason: string;
  severity: 'error' | 'warning';
}

export interface DatasetSummary {
  host: string;
  path: string;
  format: DatasetFormat;
  size: number;
  kind: DatasetKind;
  rows: number;
  /** Rows with no problem at all. */
  rowsOk: number;
  columns: string[];
  dataSources: Record<string, number>;
  abilities: Record<string, number>;
  /** The first `maxProblems` problems in file order; `problemCount` counts them all. */
  problems: DatasetProblem[];
  problemCount: number;
  /** How prompt lengths were estimated, and the budget they were checked against. */
  tokenBudget: { maxPromptTokens: number; estimate: 'chars/4' };
  /** The other split the prompts were compared with, if any. */
  comparedWith?: string;
}

interface InspectOptions {
  /** Prompts longer than this many tokens (approximately: characters / 4) are reported. Default 1024 (verl's data.max_prompt_length default). */
  maxPromptTokens?: number;
  maxProblems?: number;
  kind?: DatasetKind;
  /** The training split to check this (validation) split against; found automatically next to `test`/`val` files when undefined. */
  against?: DatasetReader | null;
  signal?: AbortSignal;
  onProgress?: (rows: number) => void;
}

/** Beyond this many rows, duplicate prompts are no longer tracked (memory stays bounded); the summary says so. */
const MAX_TRACKED_PROMPTS = 5_000_000;

/** Tokens of a prompt, approximately: one token per four characters (close for English BPE vocabularies; no tokenizer needed). */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The kind of a dataset from its first 200 rows. */
async function sniffKind(reader: DatasetReader, signal?: AbortSignal): Promise<DatasetKind> {
  const first = await readRows(reader, 0, 200, signal);
  return detectKind(first.filter((r) => r.error === undefined).map((r) => r.value));
}

/**
 * Reads every row once: counts rows, data sources and abilities, checks each row against its kind's zod schema, and finds
 * duplicate prompts, empty ground truths, prompts over the token budget and prompts shared with the training split.
 */
export async function inspectDataset(reader: DatasetReader, opts: InspectOptions = {}): Promise<DatasetSummary> {
  const maxPromptTokens = opts.maxPromptTokens ?? 1024;
  const maxProblems = opts.maxProblems ?? 1000;
  const kind = opts.kind ?? (await sniffKind(reader, opts.signal));
  const schema = ROW_SCHEMAS[kind];
  const against = opts.against === undefined ? await openTrainSibling(reader) : opts.against;
  const trainPrompts = against ? await promptIndex(against, kind, opts.signal) : undefined;

  const problems: DatasetProblem[] = [];
  let problemCount = 0;
  const report = (p: DatasetProblem) => {
    problemCount++;
    if (problems.length < maxProblems) problems.push(p);
  };
  const dataSources: Record<string, number> = {};
  const abilities: Record<string, number> = {};
  const columns = new Set(reader.declaredColumns ?? []);
  const seen = new Map<number, number>();
  let rows = 0;
  let rowsOk = 0;
  let tracking = true;

  for await (const rec of reader.rows({ signal: opts.signal })) {
    rows++;
    if (rows % 10_000 === 0) opts.onProgress?.(rows);
    const at = { row: rec.index, ...(rec.line !== undefined ? { line: rec.line } : {}) };
    const before = problemCount;
    if (rec.error !== undefined) {
      report({ ...at, reason: rec.error, severity: 'error' });
      continue;
    }
    const value = rec.value;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const r = value as Record<string, unknown>;
      if (columns.size < 200 && rows <= 1000) for (const k of Object.keys(r)) columns.add(k);
      if (typeof r.data_source === 'string') dataSources[r.data_source] = (dataSources[r.data_source] ?? 0) + 1;
      if (typeof r.ability === 'string') abilities[r.ability] = (abilities[r.ability] ?? 0) + 1;
    }
    const parsed = schema.safeParse(value, { error: plainZodError });
    if (!parsed.success) {
      for (const issue of plainIssues(parsed.error.issues)) {
        report({ ...at, field: fieldPath(issue.path) || undefined, reason: issue.message, severity: 'error' });
      }
    }
    if (
      kind === 'verl-rl' &&
      parsed.success &&
      isEmpty((value as { reward_model: { ground_truth?: unknown } }).reward_model.ground_truth)
    ) {
      report({
        ...at,
        field: 'reward_model.ground_truth',
        reason: 'empty ground truth: the reward can never be earned',
        severity: 'error',
      });
    }
    const prompt = promptText(kind, value);
    if (prompt !== undefined) {
      const tokens = estimateTokens(prompt);
      if (tokens > maxPromptTokens) {
        report({
          ...at,
          field: promptField(kind),
          reason: `prompt is about ${tokens} tokens (${prompt.length} characters / 4), over the budget of ${maxPromptTokens}`,
          severity: 'warning',
        });
      }
      const h = stringHash(prompt);
      const first = seen.get(h);
      if (first !== undefined)
        report({ ...at, field: promptField(kind), reason: `duplicate prompt: the same as row ${first + 1}`, severity: 'warning' });
      else if (tracking) {
        seen.set(h, rec.index);
        if (seen.size >= MAX_TRACKED_PROMPTS) {
          tracking = false;
          report({ reason: `duplicate prompts are checked in the first ${MAX_TRACKED_PROMPTS} rows only`, severity: 'warning' });
        }
      }
      const inTrain = trainPrompts?.get(h);
      if (inTrain !== undefined && against) {
        report({
          ...at,
          field: promptField(kind),
          reason: `train/validation overlap: the same prompt is row ${inTrain + 1} of ${basename(against.path)}`,
          severity: 'warning',
        });
      }
    }
    if (problemCount === before) rowsOk++;
  }
  opts.onProgress?.(rows);
  return {
    host: reader.host.name,
    path: reader.path,
    format: reader.format,
    size: reader.size,
    kind,
    rows,
    rowsOk,
    columns: [...columns],
    dataSources,
    abilities,
    problems,
    problemCount,
    tokenBudget: { maxPromptTokens, estimate: 'chars/4' },
    ...(against ? { comparedWith: against.path } : {}),
  };
}

function promptField(kind: DatasetKind): string {
  return kind === 'trl-conversational' ? 'messages' : 'prompt';
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

async function promptIndex(reader: DatasetReader, kind: DatasetKind, signal?: AbortSignal): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for await (const rec of reader.rows({ signal })) {
    const p = rec.error === undefined ? promptText(kind, rec.value) : undefined;
    if (p !== undefined && !out.has(stringHash(p))) out.set(stringHash(p), rec.index);
    if (out.size >= MAX_TRACKED_PROMPTS) break;
  }
  return out;
}

const VALIDATION_NAME = /^(.*?)(test|val|valid|validation|dev)(\.[a-z]+)$/i;

/** For `…/test.parquet` (or val, validation, dev) the training split beside it (`…/train.parquet`), if there is one. */
export function trainSiblingPath(path: string): string | undefined {
  const m = VALIDATION_NAME.exec(basename(path));
  return m ? join(dirname(path), `${m[1]}train${m[3]}`) : undefined;
}

async function openTrainSibling(reader: DatasetReader): Promise<DatasetReader | null> {
  const sibling = trainSiblingPath(reader.path);
  if (!sibling) return null;
  return openSibling(reader.host, sibling);
}

async function openSibling(host: Host, path: string): Promise<DatasetReader | null> {
  const exists = await host.stat(path).then(
    (s) => s.kind === 'file',
    () => false,
  );
  return exists ? openDataset(host, path) : null;
}
