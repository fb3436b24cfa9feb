import type { ExtraValue, Turn } from './episode';
import { labelGameTurns } from './selfplay-game';
import { splitParts, splitTranscript } from './transcript';

/** The trainer formats an episode file can hold (../shared/docs/trainer-formats.md). */
type EpisodeFormat = 'verl' | 'messages' | 'trl';

/** One record of any format, reduced to what the viewer needs. */
export interface EpisodeRecord {
  step?: number;
  /** The prompt as text (identifies the GRPO group and the same prompt across steps). */
  prompt: string;
  /** The policy's answer as text (its length is the response length). */
  response: string;
  score: number | null;
  groundTruth: unknown;
  dataSource?: string;
  extra: Record<string, unknown>;
  advantage?: number;
  turns(): Turn[];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  return JSON.stringify(v);
}

function stepOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/** Which format a parsed JSONL object is in, or why it is neither. */
export function jsonlFormat(obj: unknown): EpisodeFormat | string {
  if (!isObj(obj)) return 'not a JSON object';
  if (Array.isArray(obj.messages)) return 'messages';
  if ('input' in obj || 'output' in obj) return 'verl';
  return 'neither a verl dump record (input, output) nor a trajectory (messages)';
}

/** verl's `_dump_generations`: input, output, gts, score, step, plus every extra key of the reward function. */
export function verlRecord(obj: Obj): EpisodeRecord {
  const { input, output, gts, score, step, data_source, ...extra } = obj;
  const prompt = text(input);
  const response = text(output);
  return {
    step: stepOf(step),
    prompt,
    response,
    score: num(score),
    groundTruth: gts,
    dataSource: typeof data_source === 'string' ? data_source : undefined,
    extra,
    // A self-play game's sample names its turns by who played them (attacker, assessor, referee).
    turns: () => labelGameTurns(splitTranscript(prompt, response), extra),
  };
}

/** The text of a message's content: a string, or OpenAI-style parts (`[{type: 'text', text}]`). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : text(p))).join('');
  return text(content);
}

function toolCallText(call: unknown): string {
  if (!isObj(call)) return text(call);
  const fn = isObj(call.function) ? call.function : call;
  const name = typeof fn.name === 'string' ? fn.name : 'tool';
  const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
  return JSON.stringify({ name, arguments: safeJson(args) }, null, 2);
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s; // arguments that are not JSON are shown as the model wrote them
  }
}

/** A `messages` list (system/user/assistant/tool, OpenAI tool_calls, reasoning_content) as turns. */
function messageTurns(messages: unknown[]): Turn[] {
  return messages.map((m): Turn => {
    if (!isObj(m)) return { role: 'unknown', content: text(m), parts: [{ kind: 'text', text: text(m) }] };
    const role = typeof m.role === 'string' ? m.role : 'unknown';
    const content = contentText(m.content);
    const parts = role === 'tool' ? (content ? [{ kind: 'tool_response' as const, text: content }] : []) : splitParts(content);
    const reasoning = typeof m.reasoning_content === 'string' ? m.reasoning_content : undefined;
    if (reasoning) parts.unshift({ kind: 'think', text: reasoning });
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) parts.push({ kind: 'tool_call', text: toolCallText(c) });
    const name = typeof m.name === 'string' ? m.name : undefined;
    return { role, content, parts, ...(name ? { name } : {}) };
  });
}

/** Plain JSONL trajectories: `messages` plus optional score/reward, ground truth, data_source, step and anything else. */
export function messagesRecord(obj: Obj): EpisodeRecord {
  const { messages, score, reward, step, data_source, ground_truth, gts, reward_model, ...extra } = obj;
  const list = messages as unknown[];
  const firstAssistant = list.findIndex((m) => isObj(m) && m.role === 'assistant');
  const promptMsgs = firstAssistant === -1 ? list : list.slice(0, firstAssistant);
  const responseMsgs = firstAssistant === -1 ? [] : list.slice(firstAssistant);
  const rewardNum = num(reward);
  if (reward !== undefined && rewardNum === null) extra.reward = reward;
  const rm = isObj(reward_model) ? reward_model : undefined;
  return {
    step: stepOf(step),
    prompt: JSON.stringify(promptMsgs),
    response: responseMsgs
      .filter((m) => isObj(m) && m.role === 'assistant')
      .map((m) => contentText((m as Obj).content))
      .join('\n'),
    score: num(score) ?? rewardNum,
    groundTruth: ground_truth ?? gts ?? rm?.ground_truth,
    dataSource: typeof data_source === 'string' ? data_source : undefined,
    extra,
    turns: () => messageTurns(list),
  };
}

const TRL_COLUMNS = new Set(['step', 'prompt', 'completion', 'advantage']);

/** A TRL `completions_{step}.parquet` row: step, prompt, completion, one column per reward function, advantage. */
export function trlRecord(row: Obj): EpisodeRecord {
  const rewards: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!TRL_COLUMNS.has(k)) rewards[k] = typeof v === 'bigint' ? Number(v) : v;
  const values = Object.values(rewards)
    .map(num)
    .filter((v): v is number => v !== null);
  const prompt = row.prompt;
  const completion = row.completion;
  const promptText = Array.isArray(prompt) ? JSON.stringify(prompt) : text(prompt);
  const completionText = Array.isArray(completion)
    ? completion.map((m) => (isObj(m) ? contentText(m.content) : text(m))).join('\n')
    : text(completion);
  const step = typeof row.step === 'bigint' ? Number(row.step) : row.step;
  return {
    step: stepOf(step),
    prompt: promptText,
    response: completionText,
    // TRL's reward is the weighted sum of its reward functions; the dump has no weights, so they count 1 each.
    score: values.length ? values.reduce((a, b) => a + b, 0) : null,
    groundTruth: undefined,
    extra: rewards,
    advantage: num(row.advantage) ?? undefined,
    turns: () => {
      const pre = Array.isArray(prompt) ? messageTurns(prompt) : [];
      const post = Array.isArray(completion) ? messageTurns(completion) : [];
      if (Array.isArray(prompt) || Array.isArray(completion)) {
        return [
          ...(Array.isArray(prompt) ? pre : splitTranscript(promptText, '').slice(0, -1)),
          ...(Array.isArray(completion) ? post : splitTranscript('', completionText)),
        ];
      }
      return splitTranscript(promptText, completionText);
    },
  };
}

/** A reward function's extra value reduced to a table cell (long strings are cut; the episode view has them whole). */
export function extraCell(v: unknown): ExtraValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return Number(v);
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
}
