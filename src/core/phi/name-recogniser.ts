import type { PhiFinding } from './phi-categories';
import { COMMON, FIRST, LAST, nameLexicon } from './name-lexicon';
import { WORD_SRC, type Candidates } from './text-candidates';

/*
 * Names in clinical text, Philter-style: a capitalised word is a name when its context says so (a title, a label such as
 * "Patient:", a relative such as "her husband"), when the lexicon knows it as a given name, or when it runs with other
 * capitalised words the lexicon knows as no common word ("Rosina Keeling was referred"). A surname from the lexicon counts
 * before a given name ("Smith, John"). Eponyms (Graves disease, Murphy sign), departments and institutions are not names.
 * One pass over the capitalised words of the text; a name never runs across a line break.
 */

/** The next word of a name on the same line: a word or an initial, after spaces (and a comma: "Smith, John"). */
const NEXT = new RegExp(`(,?)[ \\t]+([A-Z]\\.|${WORD_SRC})`, 'y');

/**
 * What may stand before a name, as lookbehinds tried (sticky) only where a capitalised word starts: a look back from each
 * such word costs far less than a scan of the whole text for every title, label and relative.
 */
const TITLES = ['Dr', 'Mr', 'Mrs', 'Ms', 'Miss', 'Mx', 'Prof', 'Doctor', 'Nurse', 'Sister'];
const TITLE_BEFORE = new RegExp(`(?<=\\b(?:${TITLES.join('|')})\\.?[ \\t]+)`, 'y');
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
const RELATIONS = [
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
];
const RELATION_BEFORE = new RegExp(`(?<=\\b(?:${RELATIONS.join('|')})(?:,[ \\t]*|[ \\t]+))`, 'iy');

/** The last letters of titles (case as written) and of relations (lower case): a word ending otherwise is neither. */
const TITLE_ENDS = new Set(TITLES.map((w) => w.charCodeAt(w.length - 1)));
const RELATION_ENDS = new Set(RELATIONS.map((w) => w.charCodeAt(w.length - 1)));

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

interface Word {
  text: string;
  /** What the lexicon knows it as (FIRST, LAST, COMMON bits). */
  kind: number;
  start: number;
  end: number;
  /** Whether a comma stood before it. */
  comma: boolean;
}

/** The capitalised words from `first` on, on the same line (up to four). */
function runFrom(text: string, first: Word, kinds: ReadonlyMap<string, number>): Word[] {
  const words: Word[] = [first];
  NEXT.lastIndex = first.end;
  let m: RegExpExecArray | null;
  while (words.length < 4 && (m = NEXT.exec(text)) !== null) {
    const w = m[2] ?? '';
    words.push({
      text: w,
      kind: kinds.get(w.toLowerCase()) ?? 0,
      start: NEXT.lastIndex - w.length,
      end: NEXT.lastIndex,
      comma: m[1] === ',',
    });
  }
  return words;
}

/** What stands before a name starting at `at` (a label or title over a relative). */
function contextAt(text: string, at: number): Context {
  // Each context ends in a space, a tab, `:` or `,` right before the name: elsewhere none of the lookbehinds can hold.
  const before = text.charCodeAt(at - 1);
  if (before !== 32 && before !== 9 && before !== 58 && before !== 44) return 'none';
  // The character before the spaces says which lookbehind can hold: `:` a label's, `.` or a title's last letter a title's,
  // `,` or a relation's last letter a relation's (most words follow "the", "of", "and": none is tried).
  let p = at - 1;
  while (p >= 0 && (text.charCodeAt(p) === 32 || text.charCodeAt(p) === 9)) p--;
  const c = text.charCodeAt(p);
  if (c === 58) return holds(LABEL_BEFORE, text, at) ? 'strong' : 'none';
  // A title and a relation end in spaces (a relation also in `,` and spaces): none stand right before the name.
  if ((c === 46 || TITLE_ENDS.has(c)) && p < at - 1 && holds(TITLE_BEFORE, text, at)) return 'strong';
  if ((c === 44 || RELATION_ENDS.has(c | 32)) && holds(RELATION_BEFORE, text, at)) return 'relation';
  return 'none';
}

function holds(lookbehind: RegExp, text: string, at: number): boolean {
  lookbehind.lastIndex = at;
  return lookbehind.test(text);
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

const plain = (w: Word) => !NOT_A_PERSON.test(w.text);
const uncommon = (w: Word) => INITIAL.test(w.text) || (w.kind & (FIRST | LAST)) !== 0 || (w.kind & COMMON) === 0;
// Only a label allows "Surname, Given"; elsewhere a comma ends the name.
const joined = (w: Word, i: number, context: Context) => i === 0 || !w.comma || context === 'strong';

/** How many words of the run are a name, by the context before it and what the lexicon knows. */
function nameLength(words: Word[], context: Context, text: string): number {
  let n = 0;
  if (context === 'strong') {
    while (n < words.length && plain(words[n]!) && joined(words[n]!, n, context)) n++;
    return n;
  }
  const head = words[0]!;
  const second = words[1];
  if (second?.comma && head.kind & LAST && second.kind & FIRST) return 2;
  if (context === 'relation' || head.kind & FIRST) {
    while (n < words.length && plain(words[n]!) && uncommon(words[n]!) && joined(words[n]!, n, context)) n++;
    return n;
  }
  // No context and no given name: a run of two or more uncommon words that a lower-case word follows, in a sentence (a
  // capitalised word before it means Title Case: "Is Acupuncture Efficacious for…").
  if (capitalisedBefore(text, head.start)) return 0;
  while (n < words.length && plain(words[n]!) && uncommon(words[n]!) && joined(words[n]!, n, context)) n++;
  if (n < 2) return 0;
  const end = words[n - 1]!.end;
  const after = text.slice(end, end + 24);
  return LOWER_AFTER.test(after) && !TITLE_CASE_AFTER.test(after) ? n : 0;
}

/** Every name in `text` (overlaps allowed; the caller resolves them), from its capitalised words (`c.words`). */
export function findNames(text: string, c: Candidates): PhiFinding[] {
  const { kinds } = nameLexicon();
  const out: PhiFinding[] = [];
  const { words, wordText } = c;
  // Where the next name may start: after a name, the next capitalised word past its end.
  let from = 0;
  for (let k = 0; k < words.length; k += 2) {
    const start = words[k]!;
    if (start < from) continue;
    const ctx = contextAt(text, start);
    const first = wordText[k >> 1]!;
    const kind = kinds.get(first.toLowerCase()) ?? 0;
    // Most capitalised words open a sentence ("The", "She"): without context a common word starts no name.
    if (ctx === 'none' && kind & COMMON && !(kind & (FIRST | LAST))) continue;
    const run = runFrom(text, { text: first, kind, start, end: words[k + 1]!, comma: false }, kinds);
    const n = nameLength(run, ctx, text);
    if (n === 0) continue;
    const end = run[n - 1]!.end;
    if (EPONYM_AFTER.test(text.slice(end, end + 40))) continue;
    out.push({ category: 'name', start, end });
    from = end;
  }
  return out;
}
