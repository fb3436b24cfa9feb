import { CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from '../io/json-line';
import type { PhiCategory } from './phi-categories';
import { redactText } from './redact-text';
import { unusedName } from './value-strings';

/**
 * Valid JSON text with PHI replaced inside its strings, object keys included: each string literal is parsed, redacted and,
 * if it changed, re-encoded with JSON.stringify; every other byte (key order, spacing, number spelling such as `1.0`,
 * `\u00e9` escapes of untouched strings) stays as written. A redacted key that would equal another key of its object
 * (two names both `[NAME]`) is numbered (`[NAME] 2`): a repeated key would drop a value when the copy is read.
 */
export function redactJsonText(raw: string, onFinding: (category: PhiCategory) => void): string {
  let out = '';
  let copied = 0;
  // The objects the literal is in, innermost last: where each starts, and its keys once one of them is redacted.
  const objects: { start: number; keys?: Set<string> }[] = [];
  let from = 0;
  for (let i = raw.indexOf('"'); i !== -1;) {
    // Between literals only structure: track the objects opened and closed.
    for (let k = from; k < i; k++) {
      const c = raw.charCodeAt(k);
      if (c === OPEN_BRACE) objects.push({ start: k });
      else if (c === CLOSE_BRACE) objects.pop();
    }
    const j = stringEnd(raw, i);
    const original = JSON.parse(raw.slice(i, j + 1)) as string;
    const { text, categories } = redactText(original);
    let replacement = categories.length ? text : undefined;
    if (replacement !== undefined && isKey(raw, j + 1)) replacement = uniqueKey(raw, objects[objects.length - 1]!, replacement);
    if (replacement !== undefined) {
      categories.forEach(onFinding);
      out += raw.slice(copied, i) + JSON.stringify(replacement);
      copied = j + 1;
    }
    from = j + 1;
    i = raw.indexOf('"', j + 1);
  }
  return copied === 0 ? raw : out + raw.slice(copied);
}

/**
 * A redacted key made unique in its object: not one of the object's keys as written, nor a key redacted before it. The
 * keys are read the first time one of the object's keys is redacted, so a row without identifiers in keys costs nothing.
 */
function uniqueKey(raw: string, object: { start: number; keys?: Set<string> }, redacted: string): string {
  return unusedName(redacted, (object.keys ??= keysOf(raw, object.start)));
}

/** The keys of the object whose `{` is at `start` (its own, not those of objects inside it). */
function keysOf(raw: string, start: number): Set<string> {
  const keys = new Set<string>();
  let depth = 0;
  for (let k = start; k < raw.length; k++) {
    const c = raw.charCodeAt(k);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) break;
    } else if (c === QUOTE) {
      const j = stringEnd(raw, k);
      if (depth === 1 && isKey(raw, j + 1)) keys.add(JSON.parse(raw.slice(k, j + 1)) as string);
      k = j;
    }
  }
  return keys;
}

/** Whether the literal that ended just before `at` is an object key (the next non-space character is `:`). */
function isKey(raw: string, at: number): boolean {
  for (let k = at; k < raw.length; k++) {
    const c = raw[k];
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return c === ':';
  }
  return false;
}
