import { z } from 'zod';
import { seededRandom } from '../random/seeded-random';
import type { DatasetReader, DatasetRecord } from './dataset-reader';
import type { DatasetProblem } from './inspect-dataset';

export const CONVERT_FORMATS = ['verl', 'verl-sft', 'trl-prompt-only', 'trl-prompt-completion', 'trl-conversational'] as const;
export type ConvertFormat = (typeof CONVERT_FORMATS)[number];

/**
 * Which raw fields become what. Fields are names of the raw row (a dotted path reaches into nested objects; `_key` is the
 * row's key in a JSON object keyed by id). `template` builds the user prompt from `{field}` variables (`{question}` and
 * `{answer}` name the mapped fields); without one the prompt is the question.
 */
const ConvertMapping = z.object({
  question: z.string().min(1),
  answer: z.string().min(1),
  id: z.string().optional(),
  /** A field holding each row's data_source; else `dataSourceName`. */
  dataSource: z.string().optional(),
  dataSourceName: z.string().min(1).default('dataset'),
  ability: z.string().optional(),
  abilityName: z.string().min(1).default('medical'),
  template: z.string().optional(),
  system: z.string().optional(),
  /**
   * Raw fields copied into `extra_info` (verl) or as extra columns (TRL: they reach the reward function as kwargs): a
   * list of strings as a list, anything else as text.
   */
  extra: z.array(z.string()).default([]),
});
type ConvertMapping = z.output<typeof ConvertMapping>;

export const ConvertOptions = z.object({
  format: z.enum(CONVERT_FORMATS).default('verl'),
  mapping: ConvertMapping,
  /** Fraction of rows for training (the rest is `test`); undefined: no split, every row is `train`. */
  split: z.number().gt(0).lt(1).optional(),
  seed: z.number().int().default(42),
});
export type ConvertOptions = z.input<typeof ConvertOptions>;

export interface ConvertResult {
  train: Record<string, unknown>[];
  test: Record<string, unknown>[];
  /** Rows that could not be converted (each says row, field and why); the others are converted. */
  problems: DatasetProblem[];
  rowsIn: number;
}

const VARIABLE = /\{([^{}]+)\}/g;

/** A raw field of a record: exact key first (CSV headers have spaces and dots), then a dotted path. */
function fieldValue(rec: DatasetRecord, field: string): unknown {
  if (field === '_key') return rec.key;
  const v = rec.value;
  if (typeof v !== 'object' || v === null) return undefined;
  const obj = v as Record<string, unknown>;
  if (field in obj) return obj[field];
  let cur: unknown = obj;
  for (const part of field.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** A value as prompt text: lists of strings one per line (PubMedQA's abstract sections), objects as JSON. */
function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join('\n');
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

class RowProblem extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(reason);
  }
}

function required(rec: DatasetRecord, field: string, role: string): unknown {
  const v = fieldValue(rec, field);
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === ''))
    throw new RowProblem(field, `the ${role} field "${field}" is missing or empty`);
  return v;
}

function renderPrompt(rec: DatasetRecord, m: ConvertMapping): string {
  if (!m.template) return asText(required(rec, m.question, 'question'));
  return m.template.replace(VARIABLE, (_all, name: string) => {
    const field = name === 'question' ? m.question : name === 'answer' ? m.answer : name === 'id' && m.id ? m.id : name;
    return asText(required(rec, field, `template variable {${name}}`));
  });
}

/** One raw record as a row of the target format (the split and index go into verl's `extra_info`). */
function convertRecord(
  rec: DatasetRecord,
  m: ConvertMapping,
  format: ConvertFormat,
  split: string,
  index: number,
): Record<string, unknown> {
  const prompt = renderPrompt(rec, m);
  const answer = asText(required(rec, m.answer, 'answer'));
  const question = asText(required(rec, m.question, 'question'));
  const extra: Record<string, unknown> = {};
  for (const f of m.extra) {
    const v = fieldValue(rec, f);
    // A list of names stays a list (DiagAgent's key_exam_names: its reward compares them as a list); the rest is text.
    extra[f] = v === undefined || v === null ? null : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : asText(v);
  }
  const messages = [...(m.system ? [{ role: 'system', content: m.system }] : []), { role: 'user', content: prompt }];
  const id = m.id ? fieldValue(rec, m.id) : undefined;
  switch (format) {
    case 'verl': {
      const dataSource = m.dataSource ? asText(required(rec, m.dataSource, 'data_source')) : m.dataSourceName;
      const ability = m.ability ? asText(required(rec, m.ability, 'ability')) : m.abilityName;
      return {
        data_source: dataSource,
        prompt: messages,
        ability,
        reward_model: { style: 'rule', ground_truth: answer },
        extra_info: { split, index, ...(id !== undefined ? { id: asText(id) } : {}), question, answer, ...extra },
      };
    }
    case 'verl-sft':
      return { prompt: m.system ? `${m.system}\n\n${prompt}` : prompt, response: answer, ...extra };
    case 'trl-prompt-only':
      return { prompt: messages, solution: answer, ...extra };
    case 'trl-prompt-completion':
      return { prompt: messages, completion: [{ role: 'assistant', content: answer }], ...extra };
    case 'trl-conversational':
      return { messages: [...messages, { role: 'assistant', content: answer }], ...extra };
  }
}

/** Which of `n` rows go to the test split: round(n × (1 − split)) rows picked by a seeded shuffle. */
export function testRows(n: number, split: number, seed: number): Set<number> {
  const order = Array.from({ length: n }, (_, i) => i);
  const rand = seededRandom(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return new Set(order.slice(0, Math.round(n * (1 - split))));
}

/**
 * Converts raw rows to training rows the way the seeds' preprocessing scripts do (verl: data_source, chat prompt, ability,
 * reward_model.ground_truth, extra_info with split and index; or a TRL format), deterministically: rows keep file order
 * within each split. A row that cannot be converted is reported (row, field, reason) and the others are still converted.
 * `limit` stops after that many raw rows (the preview of a form).
 */
export async function convertDataset(
  reader: DatasetReader,
  options: ConvertOptions,
  limit?: number,
  signal?: AbortSignal,
): Promise<ConvertResult> {
  const opts = ConvertOptions.parse(options);
  const m = opts.mapping;
  const problems: DatasetProblem[] = [];
  const usable: DatasetRecord[] = [];
  let rowsIn = 0;
  for await (const rec of reader.rows({ signal })) {
    if (limit !== undefined && rowsIn >= limit) break;
    rowsIn++;
    const at = { row: rec.index, ...(rec.line !== undefined ? { line: rec.line } : {}) };
    if (rec.error !== undefined) {
      problems.push({ ...at, reason: rec.error, severity: 'error' });
      continue;
    }
    try {
      convertRecord(rec, m, opts.format, 'train', 0); // checks every mapped field before the row is counted
      usable.push(rec);
    } catch (err) {
      if (!(err instanceof RowProblem)) throw err;
      problems.push({ ...at, field: err.field, reason: err.message, severity: 'error' });
    }
  }
  const test = opts.split === undefined ? new Set<number>() : testRows(usable.length, opts.split, opts.seed);
  const out: ConvertResult = { train: [], test: [], problems, rowsIn };
  usable.forEach((rec, i) => {
    const split = test.has(i) ? 'test' : 'train';
    const rows = out[split];
    rows.push(convertRecord(rec, m, opts.format, split, rows.length));
  });
  return out;
}
