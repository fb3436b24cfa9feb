import type { PhiCategory } from './phi-categories';
import { redactText } from './redact-text';

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Valid JSON text with PHI replaced inside its string values only: each value literal is parsed, redacted and, if it
 * changed, re-encoded with JSON.stringify; every other byte (keys, key order, spacing, number spelling such as `1.0`,
 * `\u00e9` escapes of untouched strings) stays as written. Object keys are left alone, as the scan reads values only.
 */
export function redactJsonText(raw: string, onFinding: (category: PhiCategory) => void): string {
  let out = '';
  let copied = 0;
  for (let i = raw.indexOf('"'); i !== -1;) {
    let j = i + 1;
    while (j < raw.length && raw.charCodeAt(j) !== QUOTE) j += raw.charCodeAt(j) === BACKSLASH ? 2 : 1;
    const literal = raw.slice(i, j + 1);
    if (!isKey(raw, j + 1)) {
      const { text, categories } = redactText(JSON.parse(literal) as string);
      if (categories.length) {
        categories.forEach(onFinding);
        out += raw.slice(copied, i) + JSON.stringify(text);
        copied = j + 1;
      }
    }
    i = raw.indexOf('"', j + 1);
  }
  return copied === 0 ? raw : out + raw.slice(copied);
}

/** Whether the literal that ended just before `at` is an object key (the next non-space character is `:`). */
function isKey(raw: string, at: number): boolean {
  for (let k = at; k < raw.length; k++) {
    const c = raw[k];
    if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') return c === ':';
  }
  return false;
}
