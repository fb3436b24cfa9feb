import type { Turn, TurnPart } from './episode';

/** The chat template a text was rendered with, recognised by its markers. */
type ChatTemplate = 'chatml' | 'llama3' | 'mistral' | 'plain';

export function detectTemplate(text: string): ChatTemplate {
  if (text.includes('<|im_start|>')) return 'chatml';
  if (text.includes('<|start_header_id|>')) return 'llama3';
  if (text.includes('[INST]')) return 'mistral';
  return 'plain';
}

const BLOCKS: { open: string; close: string; kind: TurnPart['kind'] }[] = [
  { open: '<think>', close: '</think>', kind: 'think' },
  { open: '<tool_call>', close: '</tool_call>', kind: 'tool_call' },
  { open: '<tool_response>', close: '</tool_response>', kind: 'tool_response' },
];

/** Splits a message into text, `<think>`, `<tool_call>` and `<tool_response>` blocks; an unclosed block runs to the end. */
export function splitParts(content: string): TurnPart[] {
  const parts: TurnPart[] = [];
  let pos = 0;
  const pushText = (s: string) => {
    if (s.trim()) parts.push({ kind: 'text', text: s.trim() });
  };
  for (;;) {
    let next: { at: number; block: (typeof BLOCKS)[number] } | undefined;
    for (const block of BLOCKS) {
      const at = content.indexOf(block.open, pos);
      if (at !== -1 && (!next || at < next.at)) next = { at, block };
    }
    // Qwen3-style templates put only the closing </think> in the response (the opening tag is in the prompt).
    const strayClose = content.indexOf('</think>', pos);
    if (strayClose !== -1 && (!next || strayClose < next.at) && !parts.length && !content.slice(0, strayClose).includes('<think>')) {
      parts.push({ kind: 'think', text: content.slice(pos, strayClose).trim() });
      pos = strayClose + '</think>'.length;
      continue;
    }
    if (!next) break;
    pushText(content.slice(pos, next.at));
    const bodyStart = next.at + next.block.open.length;
    const close = content.indexOf(next.block.close, bodyStart);
    if (close === -1) {
      parts.push({ kind: next.block.kind, text: content.slice(bodyStart).trim(), unclosed: true });
      return parts;
    }
    parts.push({ kind: next.block.kind, text: content.slice(bodyStart, close).trim() });
    pos = close + next.block.close.length;
  }
  pushText(content.slice(pos));
  return parts;
}

/** A user message that only carries tool responses is the tool speaking (Qwen's template sends them as `user`). */
function turn(role: string, content: string): Turn {
  const parts = splitParts(content);
  const toolOnly = role === 'user' && parts.length > 0 && parts.every((p) => p.kind === 'tool_response');
  return { role: toolOnly ? 'tool' : role, content, parts };
}

const SPECIALS = /<\|(?:endoftext|begin_of_text|end_of_text|eom_id|eot_id|im_end)\|>|<\/?s>/g;

function splitMarked(text: string, start: string, headerEnd: string, end: string): Turn[] {
  const turns: Turn[] = [];
  const segments = text.split(start);
  const lead = segments.shift()!.replace(SPECIALS, '').trim();
  if (lead) turns.push(turn('text', lead));
  for (const seg of segments) {
    const h = seg.indexOf(headerEnd);
    const role = (h === -1 ? seg : seg.slice(0, h)).trim() || 'unknown';
    let body = h === -1 ? '' : seg.slice(h + headerEnd.length);
    const e = body.indexOf(end);
    const after =
      e === -1
        ? ''
        : body
            .slice(e + end.length)
            .replace(SPECIALS, '')
            .trim();
    if (e !== -1) body = body.slice(0, e);
    // The generation prompt (an empty assistant header at the very end) is not a turn.
    if (body.trim() || e !== -1) turns.push(turn(role, body.replace(/^\n+/, '').trimEnd()));
    if (after) turns.push(turn('text', after));
  }
  return turns;
}

function splitMistral(text: string): Turn[] {
  const turns: Turn[] = [];
  const clean = text.replace(/<\/?s>/g, '');
  const re = /\[INST\]([\s\S]*?)\[\/INST\]/g;
  let last = 0;
  for (let m = re.exec(clean); m; m = re.exec(clean)) {
    const between = clean.slice(last, m.index).trim();
    if (between) turns.push(turn(turns.length ? 'assistant' : 'text', between));
    turns.push(turn('user', m[1]!.trim()));
    last = re.lastIndex;
  }
  const rest = clean.slice(last);
  const open = rest.indexOf('[INST]');
  if (open !== -1) {
    // An [INST] with no [/INST]: the prompt was cut off.
    if (rest.slice(0, open).trim()) turns.push(turn('assistant', rest.slice(0, open).trim()));
    turns.push(turn('user', rest.slice(open + '[INST]'.length).trim()));
  } else if (rest.trim()) {
    turns.push(turn('assistant', rest.trim()));
  }
  return turns;
}

/**
 * Which role may speak after which in a chat: a system message opens, user and assistant alternate, tool answers follow
 * the assistant's calls (Qwen's template sends them as `user` turns holding `<tool_response>`).
 */
const NEXT: Record<string, readonly string[]> = {
  system: ['user'],
  user: ['assistant'],
  assistant: ['user', 'tool'],
  tool: ['assistant', 'tool'],
};

/** A prompt ending with the generation prompt, special tokens removed: `...\nassistant\n` (Qwen3 may add an empty think block). */
const GENERATION_HEADER = /(^|\n)assistant\n((?:<think>\s*<\/think>\s*)?)$/;

/**
 * The longest run of role lines (a line that is only `system`, `user`, `assistant` or `tool`) that makes a valid chat,
 * starting with `first` at line 0 and ending in one of `ends`: a role word inside a message (a user writing "user" alone
 * on a line) is taken as a boundary only where the order of speakers allows it. Returns the line index of each turn's role.
 */
function roleLines(lines: string[], first: string, ends: readonly string[]): number[] | undefined {
  const cands = [0];
  for (let i = 1; i < lines.length; i++) if (lines[i]! in NEXT) cands.push(i);
  const role = (k: number) => (k === 0 ? first : lines[cands[k]!]!);
  // best[k]: the longest valid chain from line 0 that ends at candidate k (its length, and the candidate before).
  const best: Array<{ len: number; prev: number } | undefined> = [{ len: 1, prev: -1 }];
  for (let k = 1; k < cands.length; k++) {
    let pick: { len: number; prev: number } | undefined;
    for (let j = 0; j < k; j++) {
      const b = best[j];
      if (b && NEXT[role(j)]!.includes(role(k)) && (!pick || b.len + 1 > pick.len)) pick = { len: b.len + 1, prev: j };
    }
    best[k] = pick;
  }
  let end = -1;
  for (let k = 0; k < cands.length; k++) if (best[k] && ends.includes(role(k)) && (end < 0 || best[k]!.len > best[end]!.len)) end = k;
  if (end < 0) return undefined;
  const out: number[] = [];
  for (let k = end; k >= 0; k = best[k]!.prev) out.unshift(cands[k]!);
  return out;
}

/** The turns of `lines` from the role lines found by `roleLines`; the first turn is `first`'s, its role on line 0 or not written. */
function turnsAt(lines: string[], at: number[], first: string, firstRoleWritten: boolean): Turn[] {
  return at.map((line, k) => {
    const from = k === 0 && !firstRoleWritten ? 0 : line + 1;
    return turn(
      k === 0 ? first : lines[line]!,
      lines
        .slice(from, at[k + 1] ?? lines.length)
        .join('\n')
        .trim(),
    );
  });
}

/**
 * A ChatML conversation decoded with special tokens removed, as verl dumps and TRL completions hold it (both decode with
 * `skip_special_tokens=True`): `<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n` reads `user\nQ\nassistant\n`.
 * Recognised only when the prompt starts with a `system` or `user` line and ends with the generation prompt's
 * `assistant` line; role words elsewhere split turns only in an order a chat can have. Undefined when it is not that.
 */
function splitStrippedChatml(prompt: string, response: string): Turn[] | undefined {
  const first = /^(system|user)\n/.exec(prompt)?.[1];
  const header = GENERATION_HEADER.exec(prompt);
  if (!first || !header) return undefined;
  const lines = prompt.slice(0, header.index).split('\n');
  // Before the generation prompt, the last speaker is the user (or a tool answer, or only a system message).
  const at = roleLines(lines, first, ['user', 'tool', 'system']);
  if (!at) return undefined;
  const turns = turnsAt(lines, at, first, true);
  // The response is the assistant's; a multi-turn response carries later user/tool turns and ends with the assistant.
  const rlines = (header[2]! + response).split('\n');
  const rat = roleLines(rlines, 'assistant', ['assistant']) ?? [0];
  return [...turns, ...fromEnvironment(turnsAt(rlines, rat, 'assistant', false))];
}

/** The response's turns from the policy's first reply on: every one that is not the assistant's is the environment's. */
function fromEnvironment(responseTurns: Turn[]): Turn[] {
  return responseTurns.map((t) => (t.role === 'assistant' ? t : { ...t, environment: true as const }));
}

/** A templated conversation split whole; the turns past the prompt's own come from the response. */
function responseMarked(prompt: string, joined: string, split: (text: string) => Turn[]): Turn[] {
  const turns = split(joined);
  const fromPrompt = split(prompt).length;
  return [...turns.slice(0, fromPrompt), ...fromEnvironment(turns.slice(fromPrompt))];
}

/**
 * Splits a prompt and its response (verl's `input` and `output`, TRL's `prompt` and `completion`) into the conversation they
 * encode. The two are joined first, because a chat-templated prompt ends with the assistant's header and a multi-turn
 * response carries later user/tool turns in the same template. Text with no template is a user turn and an assistant turn.
 */
export function splitTranscript(prompt: string, response: string): Turn[] {
  const joined = prompt + response;
  const template = detectTemplate(joined);
  let turns: Turn[];
  switch (template) {
    case 'chatml':
      turns = responseMarked(prompt, joined, (t) => splitMarked(t, '<|im_start|>', '\n', '<|im_end|>'));
      break;
    case 'llama3':
      turns = responseMarked(prompt, joined, (t) => splitMarked(t, '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'));
      break;
    case 'mistral':
      turns = splitMistral(joined);
      break;
    case 'plain': {
      // Role lines are whole lines; text that went through Windows tools ends them with \r\n.
      const stripped = splitStrippedChatml(prompt.replace(/\r\n/g, '\n'), response.replace(/\r\n/g, '\n'));
      if (stripped) return stripped;
      turns = [...(prompt.trim() ? [turn('user', prompt)] : []), turn('assistant', response)];
      break;
    }
  }
  // An empty answer is still an answer: show it as an empty assistant turn.
  if (template !== 'plain' && !response.trim()) turns.push(turn('assistant', response));
  return turns;
}
