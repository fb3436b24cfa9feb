import type nlpType from 'compromise/two';

/**
 * Person names from compromise's curated English lexicon (about 3,100 first names and 900 surnames). A word that is also a
 * common word is tagged as that word there (`may`: Modal, `bill`: Noun, `hope`: Singular), which is exactly what a clinical
 * name rule needs. compromise's own people() tagger is not used: it read 0.12 MB/s of MEDEC notes on this machine and
 * tagged note ids as people.
 */
export interface NameLexicon {
  /** What the lexicon knows each lower-case word as: FIRST, LAST and COMMON bits (one lookup for all three). */
  kinds: ReadonlyMap<string, number>;
}

/** A given name (compromise's MaleName, FemaleName, FirstName and Person tags). */
export const FIRST = 1;
/** A surname (LastName). */
export const LAST = 2;
/** A word the lexicon knows as something other than a name. */
export const COMMON = 4;

/**
 * The lexicon's words, each list joined by newlines: what a PHI scan's worker thread gets from the main thread
 * (scan-range.ts), so that workers load neither compromise nor its model (their bundle leaves it out: scripts/build.mjs).
 */
export interface NameWords {
  first: string;
  last: string;
  common: string;
}

let words: NameWords | undefined;
let lexicon: NameLexicon | undefined;

/**
 * The words from compromise, read once (it takes about 0.3 s to load; the bundles carry only its lexicon, read from it at
 * build time: scripts/build.mjs).
 */
export function nameWords(): NameWords {
  if (words) return words;
  const first: string[] = [];
  const last: string[] = [];
  const common: string[] = [];
  // Required here, not imported: compromise takes about 0.3 s to load, which every CLI command and the extension's start
  // would pay while only a PHI scan or a masked view needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require('compromise/two') as typeof nlpType | { default: typeof nlpType };
  // Its `require` export is the function itself; tsx and esbuild may hand over the ES module's namespace instead.
  const nlp = 'default' in loaded ? loaded.default : loaded;
  const all = (nlp.model() as { one: { lexicon: Record<string, string | string[]> } }).one.lexicon;
  for (const [word, tags] of Object.entries(all)) {
    if (word.includes(' ')) continue;
    const tag = Array.isArray(tags) ? tags[0] : tags;
    if (tag === 'MaleName' || tag === 'FemaleName' || tag === 'FirstName' || tag === 'Person') first.push(word);
    else if (tag === 'LastName') last.push(word);
    else common.push(word);
  }
  words = { first: first.join('\n'), last: last.join('\n'), common: common.join('\n') };
  return words;
}

/** Makes `given` the words that nameLexicon() looks names up in (a worker thread's, from the main thread). */
export function useNameWords(given: NameWords): void {
  words = given;
  lexicon = undefined;
}

/** The lexicon, built once on first use from nameWords(). */
export function nameLexicon(): NameLexicon {
  if (lexicon) return lexicon;
  const w = nameWords();
  const kinds = new Map<string, number>();
  for (const [list, kind] of [
    [w.first, FIRST],
    [w.last, LAST],
    [w.common, COMMON],
  ] as const)
    for (const word of list.split('\n')) kinds.set(word, (kinds.get(word) ?? 0) | kind);
  lexicon = { kinds };
  return lexicon;
}
