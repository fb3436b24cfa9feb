/*
 * Where identifiers may start in a string, found in one regex pass, so the recognisers (structured-recognisers.ts,
 * name-recogniser.ts) try their patterns (sticky) only there instead of each scanning the whole string. Each list is a
 * superset of the places a recogniser's own scan would match at, so what is found does not change: only the work.
 */

/** A capitalised word, as the name recogniser reads one. */
export const WORD_SRC = "[A-Z][A-Za-z'’]*[a-z](?:-[A-Z][A-Za-z'’]*[a-z])?";

/**
 * Runs of digits, capitalised words, `@` and a `:` that may open an IPv6 group. The alternatives share no character, so
 * the words are exactly those a global scan for WORD_SRC alone finds, and the digit runs all of them.
 */
const PASS = new RegExp(`\\d+|\\b${WORD_SRC}|@|:(?=[0-9a-fA-F]{1,4}:)`, 'g');

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

/** The candidates of `text`, into `out` (its lists are reused from call to call). */
export function findCandidates(text: string, out: Candidates): Candidates {
  // Only where needed: setting an array's length costs more than reading it.
  for (const list of [out.runs, out.words, out.wordText, out.ats]) if (list.length) list.length = 0;
  out.innerBoundary = false;
  out.hexColon = false;
  PASS.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = PASS.exec(text)) !== null) {
    const s = m[0];
    const c = s.charCodeAt(0);
    if (c <= 57) out.runs.push(m.index, m.index + s.length);
    else if (c === 58) out.hexColon = true;
    else if (c === 64) out.ats.push(m.index);
    else {
      out.words.push(m.index, m.index + s.length);
      out.wordText.push(s);
      if (!out.innerBoundary && s.length > 2 && (s.includes('-') || s.includes("'") || s.includes('’'))) out.innerBoundary = true;
    }
  }
  return out;
}

export function newCandidates(): Candidates {
  return { runs: [], words: [], wordText: [], ats: [], innerBoundary: false, hexColon: false };
}
