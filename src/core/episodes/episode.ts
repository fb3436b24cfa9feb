import { recordPlace } from '../format/row-line';
/** A piece of a turn: plain text, a reasoning block, a tool call or a tool's answer. */
export interface TurnPart {
  kind: 'text' | 'think' | 'tool_call' | 'tool_response';
  text: string;
  /** The closing tag never came (the response was cut off inside this block). */
  unclosed?: boolean;
}

/** One message of a conversation, as the chat template or the `messages` list had it. */
export interface Turn {
  role: string;
  content: string;
  parts: TurnPart[];
  /** A tool's name (tool messages) when the source names it. */
  name?: string;
}

/** A scalar a reward function returned beside `score` (e.g. `acc`, `pred`, `format`). */
export type ExtraValue = string | number | boolean | null;

/** Where an episode lives: a file on a host and its 1-based line (JSONL) or 0-based row (parquet). */
interface EpisodeLocation {
  file: string;
  line?: number;
  row?: number;
}

/** One response of the policy with everything the dump kept about it. */
export interface Episode {
  step: number;
  /** Position in its step file (0-based). */
  index: number;
  score: number | null;
  turns: Turn[];
  groundTruth: unknown;
  dataSource?: string;
  /** Every other key of the record (reward breakdown, `reward` in validation, `acc`, ...). */
  extra: Record<string, unknown>;
  /** The prompt and response as the trainer wrote them (chat-templated text), for the raw view. */
  raw: { prompt: string; response: string };
  /** TRL writes the advantage it trained on; verl's is derived from the group. */
  advantage?: number;
  location: EpisodeLocation;
}

/** A record that could not be read, with where it is. */
export interface MalformedRecord {
  file: string;
  line?: number;
  row?: number;
  message: string;
}

export class MalformedRecordError extends Error {
  constructor(readonly record: MalformedRecord) {
    super(`${recordPlace(record.file, record)}: ${record.message}`);
    this.name = 'MalformedRecordError';
  }
}
