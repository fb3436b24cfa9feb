import type { PhiFinding } from '../../../../src/core/phi/phi-categories';
import { nameWords } from '../../../../src/core/phi/name-lexicon';

interface NameLexicon {
  first: ReadonlySet<string>;
  last: ReadonlySet<string>;
  common: ReadonlySet<string>;
}

let lexicon: NameLexicon | undefined;

function nameLexicon(): NameLexicon {
  const w = nameWords();
  const set = (list: string) => new Set(list.split('\n'));
  lexicon ??= { first: set(w.first), last: set(w.last), common: set(w.common) };
  return lexicon;
}

/*
 * The name recogniser as it was before candidates (src/core/phi/text-candidates.ts): see find-phi.ts here.
 *
 * Names in clinical text, Philter-style: a capitalised word is a name when its context says so (a title, a label such as
 * "Patient:", a relative such as "her husband"), when the lexicon knows it as a given name, or when it runs with other
 * capitalised words the lexicon knows as no common word ("Rosina Keeling was referred"). A surname from the lexicon counts
 * before a given name ("Smith, John"). Eponyms (Graves disease, Murphy sign), departments and institutions are not names.
 * One pass over the capitalised words of the text; a name never runs across a line break.
 */

const WORD_SRC = "[A-Z][A-Za-z'’]*[a-z](?:-[A-Z][A-Za-z'’]*[a-z])?";
const WORD = new RegExp(`\\b${WORD_SRC}`, 'g');
/** The next word of a name on the same line: a word or an initial, after spaces (and a comma: "Smith, John"). */
const NEXT = new RegExp(`(,?)[ \\t]+([A-Z]\\.|${WORD_SRC})`, 'y');

/**
 * What may stand before a name, as lookbehinds tried (sticky) only where a capitalised word starts: a look back from each
 * such word costs far less than a scan of the whole text for every title, label and relative.
 */
const TITLE_BEFORE = /(?<=\b(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Doctor|Nurse|Sister)\.?[ \t]+)/y;
const LABEL_BEFORE = new RegExp(
  `(?<=\\b(?:${[
    'patient name',
    'patient',
    'name',
    'pt',
    'attending',
    'physician',
    'provider',
    'resident',
    'surgeon',
    'pcp',
    'cc',
    'referring physician',
    'signed by',
    'cosigned by',
    'dictated by',
    'seen by',
    'reviewed by',
    'contact',
    'emergency contact',
    'next of kin',
    'guardian',
  ].join('|')})[ \\t]*:[ \\t]*)`,
  'iy',
);
const RELATION_BEFORE = new RegExp(
  `(?<=\\b(?:${[
    'seen by',
    'referred by',
    'discussed with',
    'spoke with',
    'signed by',
    'husband',
    'wife',
    'son',
    'daughter',
    'mother',
    'father',
    'brother',
    'sister',
    'spouse',
    'partner',
    'caregiver',
    'grandson',
    'granddaughter',
    'niece',
    'nephew',
    'friend',
    'named',
  ].join('|')})(?:,[ \\t]*|[ \\t]+))`,
  'iy',
);

/** What follows an eponym: "Graves disease", "Murphy's sign", "Tanner stage". */
const EPONYM_AFTER =
  /^(?:['’]s|s['’])?\s+(?:disease|syndrome|sign|test|reflex|maneuver|manoeuvre|score|scale|criteria|classification|palsy|phenomenon|lymphoma|sarcoma|tumou?r|ulcer|fracture|procedure|operation|catheter|tube|law|triad|node|granules?|bodies|cells?|stain|method|coma|equation|formula|position|incision|hernia|diverticulum|aneurysm|ring|line|point|space|block|stage|staging|gangrene|effect|rule)\b/i;
/** Capitalised words that are not people: departments, institutions, pronouns, sentence openers. */
const NOT_A_PERSON =
  /^(?:[A-Z][a-z]+(?:ology|ologists?|iatrics|pedics|care|unit|ward|room|clinic|department|service|services)|Emergency|Medicine|Surgery|Oncology|Family|Primary|Internal|General|Intensive|Critical|Home|Social|Physical|Occupational|The|This|His|Her|Their|He|She|They|It|A|An|No|None|Unknown|Male|Female|Patient|Team|National|International|American|European|Institute|Institutes|Hospital|University|Center|Centre|Medical|Health|Society|Association|College|Foundation|Registry|Administration|Agency|Trial|Study|Group|Index|Questionnaire|Survey|Activities|Quality|Life|Daily|Living|Cancer|Lung|Heart|Breast|Kidney|Liver|Brain|Blood|Disease|Drug|Drugs|Food|Nutrition|Research|Treatment|Care|Clinical|Public|County|State|Council|Ministry|Program|Programme|Project|Database|Monte|Carlo)$/;
const INITIAL = /^[A-Z]\.$/;
/** A lower-case word after a run of capitalised words: the run is the subject of a sentence, not a heading. */
const LOWER_AFTER = /^[ \t,]+[a-z]/;
/** A short word and a capital after it: Title Case ("Heterotopic Ossification of the Hip"), not a sentence. */
const TITLE_CASE_AFTER = /^[ \t,]+(?:of|in|for|and|the|with|on|to|a|an|at|by|or|vs\.?|after|from)[ \t]+(?:the[ \t]+)?[A-Z]/;

type Context = 'strong' | 'relation' | 'none';

const CONTEXTS = [
  [LABEL_BEFORE, 'strong'],
  [TITLE_BEFORE, 'strong'],
  [RELATION_BEFORE, 'relation'],
] as const;

interface Word {
  text: string;
  lower: string;
  start: number;
  end: number;
  /** Whether a comma stood before it. */
  comma: boolean;
}

/** The capitalised words from `first` on, on the same line (up to four). */
function runFrom(text: string, first: RegExpExecArray): Word[] {
  const words: Word[] = [
    { text: first[0], lower: first[0].toLowerCase(), start: first.index, end: first.index + first[0].length, comma: false },
  ];
  NEXT.lastIndex = first.index + first[0].length;
  let m: RegExpExecArray | null;
  while (words.length < 4 && (m = NEXT.exec(text)) !== null) {
    const w = m[2] ?? '';
    words.push({ text: w, lower: w.toLowerCase(), start: NEXT.lastIndex - w.length, end: NEXT.lastIndex, comma: m[1] === ',' });
  }
  return words;
}

/** What stands before a name starting at `at` (a label or title over a relative). */
function contextAt(text: string, at: number): Context {
  for (const [re, context] of CONTEXTS) {
    re.lastIndex = at;
    if (re.test(text)) return context;
  }
  return 'none';
}

/** Whether the word before `at` on the same line starts with a capital. */
function capitalisedBefore(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
  if (i < 0 || !/[A-Za-z'’-]/.test(text[i] ?? '')) return false;
  while (i > 0 && /[A-Za-z'’-]/.test(text[i - 1] ?? '')) i--;
  const c = text.charCodeAt(i);
  return c >= 65 && c <= 90;
}

/** How many words of the run are a name, by the context before it and what the lexicon knows. */
function nameLength(words: Word[], context: Context, lex: NameLexicon, text: string): number {
  const known = (w: Word) => lex.first.has(w.lower) || lex.last.has(w.lower);
  const plain = (w: Word) => !NOT_A_PERSON.test(w.text);
  const uncommon = (w: Word) => INITIAL.test(w.text) || known(w) || !lex.common.has(w.lower);
  // Only a label allows "Surname, Given"; elsewhere a comma ends the name.
  const joined = (w: Word, i: number) => i === 0 || !w.comma || context === 'strong';
  let n = 0;
  if (context === 'strong') {
    while (n < words.length && plain(words[n]!) && joined(words[n]!, n)) n++;
    return n;
  }
  const head = words[0]!;
  const second = words[1];
  if (second?.comma && lex.last.has(head.lower) && lex.first.has(second.lower)) return 2;
  if (context === 'relation' || lex.first.has(head.lower)) {
    while (n < words.length && plain(words[n]!) && uncommon(words[n]!) && joined(words[n]!, n)) n++;
    return n;
  }
  // No context and no given name: a run of two or more uncommon words that a lower-case word follows, in a sentence (a
  // capitalised word before it means Title Case: "Is Acupuncture Efficacious for…").
  if (capitalisedBefore(text, head.start)) return 0;
  while (n < words.length && plain(words[n]!) && uncommon(words[n]!) && joined(words[n]!, n)) n++;
  if (n < 2) return 0;
  const end = words[n - 1]!.end;
  const after = text.slice(end, end + 24);
  return LOWER_AFTER.test(after) && !TITLE_CASE_AFTER.test(after) ? n : 0;
}

/** Every name in `text` (overlaps allowed; the caller resolves them). */
export function findNames(text: string): PhiFinding[] {
  const lex = nameLexicon();
  const out: PhiFinding[] = [];
  WORD.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = WORD.exec(text)) !== null) {
    const ctx = contextAt(text, m.index);
    // Most capitalised words open a sentence ("The", "She"): without context a common word starts no name.
    const lower = m[0].toLowerCase();
    if (ctx === 'none' && lex.common.has(lower) && !lex.first.has(lower) && !lex.last.has(lower)) continue;
    const words = runFrom(text, m);
    const n = nameLength(words, ctx, lex, text);
    if (n === 0) continue;
    const end = words[n - 1]!.end;
    if (EPONYM_AFTER.test(text.slice(end, end + 40))) continue;
    out.push({ category: 'name', start: m.index, end });
    WORD.lastIndex = end;
  }
  return out;
}
