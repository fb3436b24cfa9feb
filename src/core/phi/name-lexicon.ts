import nlp from 'compromise/two';

/**
 * Person names from compromise's curated English lexicon (about 3,100 first names and 900 surnames). A word that is also a
 * common word is tagged as that word there (`may`: Modal, `bill`: Noun, `hope`: Singular), which is exactly what a clinical
 * name rule needs. compromise's own people() tagger is not used: it read 0.12 MB/s of MEDEC notes on this machine and
 * tagged note ids as people.
 */
export interface NameLexicon {
  /** Lower-case given names (compromise's MaleName, FemaleName, FirstName and Person tags). */
  first: ReadonlySet<string>;
  /** Lower-case surnames (LastName). */
  last: ReadonlySet<string>;
  /** Lower-case words the lexicon knows as something other than a name. */
  common: ReadonlySet<string>;
}

let lexicon: NameLexicon | undefined;

/** The lexicon, built once on first use (compromise takes about 0.3 s to load). */
export function nameLexicon(): NameLexicon {
  if (lexicon) return lexicon;
  const first = new Set<string>();
  const last = new Set<string>();
  const common = new Set<string>();
  const words = (nlp.model() as { one: { lexicon: Record<string, string | string[]> } }).one.lexicon;
  for (const [word, tags] of Object.entries(words)) {
    if (word.includes(' ')) continue;
    const tag = Array.isArray(tags) ? tags[0] : tags;
    if (tag === 'MaleName' || tag === 'FemaleName' || tag === 'FirstName' || tag === 'Person') first.add(word);
    else if (tag === 'LastName') last.add(word);
    else common.add(word);
  }
  lexicon = { first, last, common };
  return lexicon;
}
