import { z } from 'zod';
import { expecting } from '../errors/plain-zod';

/** What trainer a dataset's rows are for, told from its columns. */
export type DatasetKind =
  'verl-rl' | 'verl-sft' | 'trl-prompt-only' | 'trl-conversational' | 'trl-prompt-completion' | 'dpo-preference' | 'raw';

export const DATASET_KIND_LABELS: Record<DatasetKind, string> = {
  'verl-rl': 'verl RL rows',
  'verl-sft': 'verl SFT (prompt/response)',
  'trl-prompt-only': 'TRL prompt-only',
  'trl-conversational': 'TRL conversational (messages)',
  'trl-prompt-completion': 'TRL prompt-completion',
  'dpo-preference': 'DPO preference',
  raw: 'raw',
};

/**
 * The kind of a dataset from the columns of its first rows (the most common shape wins, so a few bad rows do not change it).
 * `messages` rows are TRL conversational; verl's SFT trainer reads the same column for multi-turn data.
 */
export function detectKind(rows: unknown[]): DatasetKind {
  const votes = new Map<DatasetKind, number>();
  for (const r of rows) {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) continue;
    const k = kindOfRow(r as Record<string, unknown>);
    votes.set(k, (votes.get(k) ?? 0) + 1);
  }
  let best: DatasetKind = 'raw';
  let most = 0;
  for (const [k, n] of votes) if (n > most) [best, most] = [k, n];
  return best;
}

function kindOfRow(r: Record<string, unknown>): DatasetKind {
  const has = (k: string) => k in r;
  if (has('chosen') && has('rejected')) return 'dpo-preference';
  if (has('prompt') && (has('reward_model') || (has('data_source') && Array.isArray(r.prompt)))) return 'verl-rl';
  if (has('prompt') && has('completion')) return 'trl-prompt-completion';
  if (has('prompt') && has('response')) return 'verl-sft';
  if (has('messages')) return 'trl-conversational';
  if (has('prompt')) return 'trl-prompt-only';
  return 'raw';
}

const message = expecting(
  z
    .object({
      role: z.enum(['system', 'user', 'assistant', 'tool']),
      content: z.string(),
    })
    .loose(),
  'a chat message ({role, content})',
);
const messages = expecting(z.array(message).min(1, 'must have at least one message'), 'a list of chat messages ({role, content})');
const text = z.string().min(1, 'must not be empty');
const textOrMessages = expecting(z.union([text, messages]), 'text or a list of chat messages ({role, content})');

/** The zod schema of one row of each kind (unknown extra columns are allowed: trainers pass them through). */
export const ROW_SCHEMAS: Record<DatasetKind, z.ZodType> = {
  'verl-rl': z
    .object({
      data_source: text,
      prompt: messages,
      ability: z.string().optional(),
      reward_model: z
        .object({
          style: z.string().optional(),
          // Any JSON the reward function reads, but there must be one: without it no reward can be earned.
          ground_truth: expecting(z.unknown().nonoptional(), 'the reference answer (text, a number, a list or a mapping)'),
        })
        .loose(),
      extra_info: z.record(z.string(), z.unknown()).nullable().optional(),
    })
    .loose(),
  'verl-sft': z.object({ prompt: text, response: text }).loose(),
  'trl-prompt-only': z.object({ prompt: textOrMessages }).loose(),
  'trl-conversational': z.object({ messages }).loose(),
  'trl-prompt-completion': z.object({ prompt: textOrMessages, completion: textOrMessages }).loose(),
  'dpo-preference': z.object({ prompt: textOrMessages.optional(), chosen: textOrMessages, rejected: textOrMessages }).loose(),
  raw: z.record(z.string(), z.unknown()),
};

/** The text a row asks the model, for duplicate, length and overlap checks (undefined when the kind has none). */
export function promptText(kind: DatasetKind, row: unknown): string | undefined {
  if (typeof row !== 'object' || row === null) return undefined;
  const r = row as Record<string, unknown>;
  const p =
    kind === 'trl-conversational'
      ? Array.isArray(r.messages)
        ? r.messages.filter((m) => (m as { role?: unknown })?.role !== 'assistant')
        : undefined
      : r.prompt;
  if (typeof p === 'string') return p;
  if (Array.isArray(p))
    return p
      .map((m) =>
        typeof m === 'object' && m !== null && typeof (m as { content?: unknown }).content === 'string'
          ? (m as { content: string }).content
          : '',
      )
      .join('\n');
  return undefined;
}
