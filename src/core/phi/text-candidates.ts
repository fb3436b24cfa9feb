/*
 * Where identifiers may start in a string, found in one pass, so the recognisers (structured-recognisers.ts,
 * name-recogniser.ts) try their patterns (sticky) only there instead of each scanning the whole string. Each list is a
 * superset of the places a recogniser's own scan would match at, so what is found does not change: only the work.
 */

/** A capitalised word, as the name recogniser reads one. */
export const WORD_SRC = "[A-Z][A-Za-z'’]*[a-z](?:-[A-Z][A-Za-z'’]*[a-z])?";

/**
 * The words that open a labelled identifier (a label, `fax`, `SSN`, `age`, a URL's scheme...; regex sources, each an
 * alternation that starts with a letter) at a word start, any case: every pattern of structured-recognisers.ts that starts
 * with a word is tried only where one of these starts. Grouped by first letter: irregexp then tests a position against
 * one branch instead of every word (about twice as fast).
 */
export function keywordPass(sources: readonly string[]): RegExp {
  const byFirst = new Map<string, string[]>();
  for (const word of sources.flatMap((s) => s.split('|'))) {
    const first = word[0]!.toLowerCase();
    byFirst.set(first, [...(byFirst.get(first) ?? []), word.slice(1)]);
  }
  return new RegExp(`\\b(?:${[...byFirst].map(([first, rest]) => `${first}(?:${rest.join('|')})`).join('|')})`, 'gi');
}

export interface Candidates {
  /** Runs of digits: flat [start, end) pairs, in order. */
  runs: number[];
  /** Capitalised words (WORD_SRC at a word boundary) as a global scan finds them: flat [start, end) pairs, in order. */
  words: number[];
  /** The text of each word in `words`. */
  wordText: string[];
  /** Where each `@` is. */
  ats: number[];
  /**
   * Whether a word in `words` holds a hyphen or an apostrophe: a capital after one starts a word boundary inside it
   * (O’May, Smith-March), where a pattern other than the name recogniser's may start.
   */
  innerBoundary: boolean;
  /** Whether a `:`, one to four hex digits and a `:` are there (an IPv6 address may be). */
  hexColon: boolean;
}

/**
 * The candidates of `text`, into `out` (its lists are reused from call to call): what one global scan of
 * `\d+|\b${WORD_SRC}|@|:(?=[0-9a-fA-F]{1,4}:)` finds (its alternatives share no first character). A one-character
 * regex finds where one may start and the rest is read by hand, instead of that regex making an array and a string for
 * each match where most (a digit run) need only their span: 240-249 ms against 264-274 ms over 100 MB of notes.
 * test/core/phi/text-candidates.test.ts holds the regex and checks this against it.
 */
export function findCandidates(text: string, out: Candidates): Candidates {
  // Only where needed: setting an array's length costs more than reading it.
  for (const list of [out.runs, out.words, out.wordText, out.ats]) if (list.length) list.length = 0;
  out.innerBoundary = false;
  out.hexColon = false;
  const n = text.length;
  START.lastIndex = 0;
  while (START.test(text)) {
    const p = START.lastIndex - 1;
    const c = text.charCodeAt(p);
    if (c <= 57) {
      let e = p + 1;
      while (e < n && isDigitCode(text.charCodeAt(e))) e++;
      out.runs.push(p, e);
      START.lastIndex = e;
    } else if (c >= 65) {
      if (p > 0 && isWordCode(text.charCodeAt(p - 1))) continue;
      const e = capitalisedWordEnd(text, p);
      if (e < 0) continue;
      out.words.push(p, e);
      const s = text.slice(p, e);
      out.wordText.push(s);
      if (!out.innerBoundary && s.length > 2 && (s.includes('-') || s.includes("'") || s.includes('’'))) out.innerBoundary = true;
      START.lastIndex = e;
    } else if (c === 64) out.ats.push(p);
    else if (!out.hexColon) out.hexColon = hexGroupAfter(text, p + 1);
  }
  return out;
}

/** Where a candidate may start: the regex engine skips the rest (most of a note) faster than a loop over its characters. */
const START = /[0-9A-Z@:]/g;

export const isDigitCode = (c: number) => c >= 48 && c <= 57;
/** `\w`. */
export const isWordCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isHexCode = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102);

/**
 * Where WORD_SRC's match at the capital at `p` ends, or -1 where it has none: the first part as long as it can be, then
 * the part after a hyphen if one matches there (the regex's greedy order, whose first success it keeps).
 */
function capitalisedWordEnd(text: string, p: number): number {
  const e = lastLowerOfRun(text, p + 1);
  if (e < 0 || text.charCodeAt(e) !== 45) return e;
  const c = text.charCodeAt(e + 1);
  if (c < 65 || c > 90) return e;
  const hyphened = lastLowerOfRun(text, e + 2);
  return hyphened < 0 ? e : hyphened;
}

/** Just past the last lower-case letter of the run of `[A-Za-z'’]` that starts at `from`, or -1 where it has none. */
function lastLowerOfRun(text: string, from: number): number {
  let end = -1;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) end = i + 1;
    else if (!((c >= 65 && c <= 90) || c === 39 || c === 0x2019)) break;
  }
  return end;
}

/** `(?=[0-9a-fA-F]{1,4}:)` at `at`: one to four hex digits, then `:`. */
function hexGroupAfter(text: string, at: number): boolean {
  let k = 0;
  while (k < 5 && isHexCode(text.charCodeAt(at + k))) k++;
  return k >= 1 && k <= 4 && text.charCodeAt(at + k) === 58;
}

export function newCandidates(): Candidates {
  return { runs: [], words: [], wordText: [], ats: [], innerBoundary: false, hexColon: false };
}
