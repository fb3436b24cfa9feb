import { createHash } from 'node:crypto';
import type { ExtraValue } from './episode';
import { extraCell, type EpisodeRecord } from './records';

/** Why a response looks cut off; each heuristic is named so the viewer can say which one fired. */
export const FLAG_EMPTY = 1;
/** A `<think>`, `<answer>` or `<tool_call>` was opened and never closed. */
export const FLAG_UNCLOSED = 2;
/** The text keeps special tokens but does not end with an end-of-turn token. */
export const FLAG_NO_EOS = 4;

const END_TOKENS = ['<|im_end|>', '<|eot_id|>', '<|endoftext|>', '<|end_of_text|>', '</s>', '<|eom_id|>'];
const SPECIAL = /<\|[a-z_]+\|>|<\/s>/;
const PAIRS = [
  ['<think>', '</think>'],
  ['<answer>', '</answer>'],
  ['<tool_call>', '</tool_call>'],
] as const;

function count(s: string, sub: string): number {
  let n = 0;
  for (let i = s.indexOf(sub); i !== -1; i = s.indexOf(sub, i + sub.length)) n++;
  return n;
}

function responseFlags(response: string): number {
  let flags = 0;
  const trimmed = response.trim();
  if (!trimmed) return FLAG_EMPTY;
  if (PAIRS.some(([open, close]) => count(response, open) > count(response, close))) flags |= FLAG_UNCLOSED;
  if (SPECIAL.test(response) && !END_TOKENS.some((t) => trimmed.endsWith(t))) flags |= FLAG_NO_EOS;
  return flags;
}

/** A 48-bit digest of a prompt: the same prompt has the same key in every step file. */
function promptKey(prompt: string): number {
  return createHash('sha1').update(prompt).digest().readUIntBE(0, 6);
}

function grown<T extends Float64Array | Int32Array | Uint8Array>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}

/** An extra key's values: numbers in `nums` (NaN when absent), anything else as dictionary codes in `strs` (-1 when absent). */
interface ExtraColumn {
  nums: Float64Array;
  strs: Int32Array;
}

/**
 * What the index keeps of each episode of one step file, column by column in typed arrays (a few dozen bytes per episode,
 * never the text): where its line is, its score, response length, prompt key, GRPO group, data_source and extra keys.
 */
export class EpisodeTable {
  length = 0;
  private cap = 0;
  /** Byte span of the record (JSONL) or the row number (parquet) in `start`. */
  start = new Float64Array(0);
  end = new Float64Array(0);
  /** 1-based line number in the file (JSONL), the row for parquet. */
  line = new Int32Array(0);
  score = new Float64Array(0);
  responseLength = new Int32Array(0);
  promptKey = new Float64Array(0);
  group = new Int32Array(0);
  /** The next row of the same group (-1 at its last): groups are not runs of adjacent rows. */
  private nextInGroup = new Int32Array(0);
  dataSource = new Int32Array(0);
  flags = new Uint8Array(0);
  advantage = new Float64Array(0);
  step = new Float64Array(0);
  readonly extras = new Map<string, ExtraColumn>();
  /**
   * Each group's first and last row and size. A GRPO group is the responses to one prompt in a step: rows with the same
   * `uid` (when the dump has one) or the same prompt, wherever they are. They are NOT runs of adjacent rows: verl's
   * `trainer.balance_batch` (on by default) reorders the batch before the dump.
   */
  private readonly groupFirst: number[] = [];
  private readonly groupLast: number[] = [];
  private readonly groupSizes: number[] = [];
  private readonly groupOf = new Map<number | string, number>();
  private readonly dict: string[] = [];
  private readonly codes = new Map<string, number>();

  intern(s: string): number {
    let c = this.codes.get(s);
    if (c === undefined) {
      c = this.dict.length;
      this.dict.push(s);
      this.codes.set(s, c);
    }
    return c;
  }

  /** The code of a string already seen, or -2 (matches nothing). */
  lookup(s: string): number {
    return this.codes.get(s) ?? -2;
  }

  str(code: number): string | undefined {
    return code < 0 ? undefined : this.dict[code];
  }

  private ensure(n: number): void {
    if (n <= this.cap) return;
    const cap = Math.max(1024, this.cap * 2, n);
    this.start = grown(this.start, cap);
    this.end = grown(this.end, cap);
    this.line = grown(this.line, cap);
    this.score = grown(this.score, cap);
    this.responseLength = grown(this.responseLength, cap);
    this.promptKey = grown(this.promptKey, cap);
    this.group = grown(this.group, cap);
    this.nextInGroup = grown(this.nextInGroup, cap);
    this.dataSource = grown(this.dataSource, cap);
    this.flags = grown(this.flags, cap);
    this.advantage = grown(this.advantage, cap);
    this.step = grown(this.step, cap);
    for (const col of this.extras.values()) {
      col.nums = grown(col.nums, cap);
      col.strs = grown(col.strs, cap);
    }
    this.cap = cap;
  }

  private column(key: string): ExtraColumn {
    let col = this.extras.get(key);
    if (!col) {
      col = { nums: new Float64Array(this.cap).fill(NaN), strs: new Int32Array(this.cap).fill(-1) };
      this.extras.set(key, col);
    }
    return col;
  }

  add(rec: EpisodeRecord, where: { start: number; end: number; line: number }): number {
    const i = this.length;
    this.ensure(i + 1);
    this.start[i] = where.start;
    this.end[i] = where.end;
    this.line[i] = where.line;
    this.score[i] = rec.score ?? NaN;
    this.responseLength[i] = rec.response.length;
    const key = promptKey(rec.prompt);
    this.promptKey[i] = key;
    const uid = rec.extra.uid;
    const groupKey = typeof uid === 'string' || typeof uid === 'number' ? `uid:${uid}` : key;
    let g = this.groupOf.get(groupKey);
    if (g === undefined) {
      g = this.groupFirst.length;
      this.groupOf.set(groupKey, g);
      this.groupFirst.push(i);
      this.groupSizes.push(0);
    } else {
      this.nextInGroup[this.groupLast[g]!] = i;
    }
    this.groupLast[g] = i;
    this.groupSizes[g]!++;
    this.nextInGroup[i] = -1;
    this.group[i] = g;
    this.dataSource[i] = rec.dataSource === undefined ? -1 : this.intern(rec.dataSource);
    this.flags[i] = responseFlags(rec.response);
    this.advantage[i] = rec.advantage ?? NaN;
    this.step[i] = rec.step ?? NaN;
    for (const col of this.extras.values()) {
      col.nums[i] = NaN;
      col.strs[i] = -1;
    }
    for (const [k, v] of Object.entries(rec.extra)) {
      const cell = extraCell(v);
      if (cell === null) continue;
      const col = this.column(k);
      if (typeof cell === 'number') col.nums[i] = cell;
      else col.strs[i] = this.intern(String(cell));
    }
    this.length = i + 1;
    return i;
  }

  extra(key: string, i: number): ExtraValue | undefined {
    const col = this.extras.get(key);
    if (!col) return undefined;
    const s = col.strs[i]!;
    if (s >= 0) return this.dict[s]!;
    const n = col.nums[i]!;
    return Number.isNaN(n) ? undefined : n;
  }

  get groupCount(): number {
    return this.groupFirst.length;
  }

  groupSize(g: number): number {
    return this.groupSizes[g]!;
  }

  /** The rows of group g, in file order. */
  groupMembers(g: number): number[] {
    const out: number[] = [];
    for (let j = this.groupFirst[g]!; j !== -1; j = this.nextInGroup[j]!) out.push(j);
    return out;
  }

  /** The advantage the trainer used (TRL), else the GRPO one: score minus the group's mean score. */
  advantageOf(i: number): number {
    const given = this.advantage[i]!;
    if (!Number.isNaN(given)) return given;
    let sum = 0;
    let n = 0;
    for (const j of this.groupMembers(this.group[i]!)) {
      const s = this.score[j]!;
      if (!Number.isNaN(s)) {
        sum += s;
        n++;
      }
    }
    const s = this.score[i]!;
    return n && !Number.isNaN(s) ? s - sum / n : NaN;
  }

  /** Bytes held by the columns (for the memory bound). */
  bytes(): number {
    return this.cap * (8 * 7 + 4 * 5 + 1) + this.extras.size * this.cap * 12 + this.groupFirst.length * 48;
  }
}
