/*
 * The one parser of a JSON line (or row) written by a trainer or a user: what Python's json.dumps writes is accepted
 * (verl dumps `"score": NaN` when a score diverges, also Infinity and -Infinity), a row nested deeper than any real one
 * is refused before code that walks values meets it, and a refusal says what is wrong without quoting the row (medical
 * text may hold patient identifiers).
 */

/**
 * Nesting deeper than this is refused as one bad row: walks over a parsed value recurse (a 6,000-deep row overflowed the
 * stack and took the whole file with it), and Python's own json module cannot write or read a row nested 1,000 deep.
 */
export const MAX_JSON_DEPTH = 512;

export type JsonLine = { value: unknown; error?: undefined } | { error: string; value?: undefined };

/** The character codes of JSON's structure, for scans of JSON text. */
export const QUOTE = 34;
const BACKSLASH = 92;
export const OPEN_BRACE = 123;
export const OPEN_BRACKET = 91;
export const CLOSE_BRACE = 125;
export const CLOSE_BRACKET = 93;

/**
 * One JSON value from a line of text: its value, or why it is not one (in plain words, without the line's text).
 * `maxDepth`: Infinity for a caller that never walks the value (a redaction rewrites the text itself).
 */
export function parseJsonLine(text: string, maxDepth = MAX_JSON_DEPTH): JsonLine {
  if (deeperThan(text, maxDepth)) return { error: deepRow(maxDepth) };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    const python = withPythonNumbers(text);
    if (python === undefined) return { error: jsonSyntaxWhy(err) };
    try {
      return { value: restoreNumbers(JSON.parse(python.text) as unknown, python.numbers) };
    } catch (again) {
      if (!(again instanceof SyntaxError)) throw again;
      return { error: jsonSyntaxWhy(err) };
    }
  }
}

/**
 * JSON.parse's complaint without the text it quotes: V8 writes `Unexpected token 'J', "John Smi"... is not valid JSON`;
 * its other messages give a position and quote only punctuation (`Expected ',' or '}' after property value in JSON at
 * position 28`).
 */
export function jsonSyntaxWhy(err: SyntaxError): string {
  if (/is not valid JSON/.test(err.message)) return 'malformed JSON: an unexpected character';
  if (/Unexpected end of JSON input/.test(err.message)) return 'malformed JSON: it ends before its value does (cut off?)';
  return `malformed JSON: ${err.message}`;
}

/** Whether objects and arrays nest deeper than `max` anywhere in `text` (brackets inside strings do not count). */
function deeperThan(text: string, max: number): boolean {
  if (max === Infinity) return false;
  // Fewer brackets than the limit cannot nest past it: most lines are decided without a scan.
  let brackets = 0;
  for (let i = text.indexOf('{'); i !== -1 && brackets <= max; i = text.indexOf('{', i + 1)) brackets++;
  for (let i = text.indexOf('['); i !== -1 && brackets <= max; i = text.indexOf('[', i + 1)) brackets++;
  if (brackets <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * Why a value parsed from a whole JSON document cannot be a row (nested past MAX_JSON_DEPTH), or undefined: a document's
 * rows are checked one by one, so one deep row is one bad row. Iterative, so the check itself cannot overflow.
 */
export function rowDepthProblem(value: unknown): string | undefined {
  const stack: [unknown, number][] = [[value, 1]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_JSON_DEPTH) return deepRow(MAX_JSON_DEPTH);
    for (const x of Object.values(v)) if (typeof x === 'object' && x !== null) stack.push([x, depth + 1]);
  }
  return undefined;
}

function deepRow(max: number): string {
  return `nested more than ${max} levels deep (objects or arrays inside each other): not read`;
}

/** Where the string literal opened at `i` closes: its closing quote (or the end of the text). */
export function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text.charCodeAt(j) !== QUOTE) j += text.charCodeAt(j) === BACKSLASH ? 2 : 1;
  return j;
}

const PYTHON_NUMBERS: ReadonlyMap<string, number> = new Map([
  ['-Infinity', -Infinity],
  ['Infinity', Infinity],
  ['NaN', NaN],
]);

/**
 * `value` with each marker string put back as the number it stands for. Iterative, not JSON.parse's reviver: a reviver
 * recurses, and a whole JSON document (read without a depth limit) may nest thousands deep.
 */
function restoreNumbers(value: unknown, numbers: Map<string, number>): unknown {
  if (typeof value === 'string') return numbers.has(value) ? numbers.get(value) : value;
  const stack = [value];
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (typeof v !== 'object' || v === null) continue;
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const x = o[k];
      if (typeof x === 'object' && x !== null) stack.push(x);
      // defineProperty: a key `__proto__` is data, as JSON.parse made it, not the object's prototype.
      else if (typeof x === 'string' && numbers.has(x))
        Object.defineProperty(o, k, { value: numbers.get(x), writable: true, enumerable: true, configurable: true });
    }
  }
  return value;
}

/**
 * `text` with Python's NaN, Infinity and -Infinity (outside strings) written as marker strings, and the number each
 * marker stands for; undefined when it has none. The markers hold a character no JSON text has unescaped, made unique.
 */
function withPythonNumbers(text: string): { text: string; numbers: Map<string, number> } | undefined {
  if (!/NaN|Infinity/.test(text)) return undefined;
  let marker = '\u0001nan';
  while (text.includes(marker) || text.includes(JSON.stringify(marker).slice(1, -1))) marker += '\u0001';
  const numbers = new Map<string, number>();
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    for (const [word, n] of PYTHON_NUMBERS) {
      if (!text.startsWith(word, i)) continue;
      const key = `${marker}${word}`;
      numbers.set(key, n);
      out += text.slice(copied, i) + JSON.stringify(key);
      copied = i + word.length;
      i = copied - 1;
      break;
    }
  }
  return numbers.size ? { text: out + text.slice(copied), numbers } : undefined;
}
