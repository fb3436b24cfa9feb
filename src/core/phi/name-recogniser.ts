import type { PhiFinding } from './phi-categories';
import { nameLexicon, type NameLexicon } from './name-lexicon';

/*
 * Names in clinical text, Philter-style: a capitalised word is a name when its context says so (a title, a label such as
 * "Patient:" or "seen by", a relative such as "her husband"), or when the lexicon knows it as a given name; a surname from the
 * lexicon counts next to a given name. Eponyms (Graves disease, Murphy sign) and department names are not names.
 */

const WORD = "[A-Z][A-Za-z'’]*[a-z](?:-[A-Z][A-Za-z'’]*[a-z])?";
const INITIAL = '[A-Z]\\.';
/** Up to three name words or initials after the first. */
const SEQ = `${WORD}(?:[ \\t]+(?:${INITIAL}|${WORD})){0,3}`;
/** After a label a name may be written surname first: "Name: Smith, John". */
const LABELLED_SEQ = `${WORD}(?:,?[ \\t]+(?:${INITIAL}|${WORD})){0,3}`;

/** Any capitalisation of each word: "patient", "Patient", "PATIENT". */
function anyCase(words: string[]): string {
  return words.map((w) => `${w}|${w[0].toUpperCase()}${w.slice(1)}|${w.toUpperCase()}`).join('|');
}

const TITLE = new RegExp(`\\b(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Doctor|Nurse|Sister)\\.?[ \\t]+(${SEQ})`, 'g');
const LABEL = new RegExp(
  `\\b(?:${anyCase([
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
  ])})[ \\t]*:[ \\t]*(${LABELLED_SEQ})`,
  'g',
);
const RELATION = new RegExp(
  `\\b(?:${anyCase([
    'seen by',
    'referred by',
    'discussed with',
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
  ])})(?:,[ \\t]*|[ \\t]+)(${SEQ})`,
  'g',
);
/** A surname, a comma and a given name: "Smith, John". */
const SURNAME_FIRST = new RegExp(`\\b(${WORD}),[ \\t]+(${WORD})\\b`, 'g');
const CAPITALISED = new RegExp(`\\b${WORD}`, 'g');
/** Two or three capitalised words before a lower-case word: "Rosina Keeling was referred". */
const CAPITALISED_RUN = new RegExp(`\\b${WORD}(?:[ \\t]+${WORD}){1,2}(?=[ \\t,]+[a-z])`, 'g');

/** What follows an eponym: "Graves disease", "Murphy's sign", "Glasgow Coma Scale". */
const EPONYM_AFTER =
  /^(?:['’]s|s['’])?\s+(?:disease|syndrome|sign|test|reflex|maneuver|manoeuvre|score|scale|criteria|classification|palsy|phenomenon|lymphoma|sarcoma|tumou?r|ulcer|fracture|procedure|operation|catheter|tube|law|triad|node|granules?|bodies|cells?|stain|method|coma|equation|formula|position|incision|hernia|diverticulum|aneurysm|ring|line|point|space|block|stage|staging)\b/i;
/** Capitalised words after a label that are not people: departments, services, places in a hospital. */
const NOT_A_PERSON =
  /^(?:[A-Z][a-z]+(?:ology|ologists?|iatrics|pedics|care|unit|ward|room|clinic|department|service|services)|Emergency|Medicine|Surgery|Oncology|Family|Primary|Internal|General|Intensive|Critical|Home|Social|Physical|Occupational|The|This|His|Her|Their|He|She|They|It|A|An|No|None|Unknown|Male|Female|Patient|Team|National|International|American|European|Institute|Institutes|Hospital|University|Center|Centre|Medical|Health|Society|Association|College|Foundation|Registry|Administration|Agency|Trial|Study|Group|Index|Questionnaire|Survey|Activities|Quality|Life|Daily|Living|Cancer|Lung|Heart|Breast|Kidney|Liver|Brain|Blood|Disease|Drug|Drugs|Food|Nutrition|Research|Treatment|Care|Clinical|Public|County|State|Council|Ministry|Program|Programme|Project|Database|Monte|Carlo)$/;

interface Span {
  start: number;
  end: number;
}

/** A matched name sequence, trimmed of trailing words that are not people (Department names, pronouns). */
function sequence(text: string, seqStart: number, seq: string, lex: NameLexicon, strong: boolean): Span | undefined {
  const words = [...seq.matchAll(new RegExp(`${INITIAL}|${WORD}`, 'g'))];
  let keep = 0;
  for (const w of words) {
    const word = w[0];
    const lower = word.toLowerCase();
    if (NOT_A_PERSON.test(word)) break;
    // After a title or a label any capitalised word is a name; elsewhere it must not be a common word.
    if (!strong && !lex.first.has(lower) && !lex.last.has(lower) && lex.common.has(lower) && !/^[A-Z]\.$/.test(word)) break;
    keep++;
  }
  if (keep === 0) return undefined;
  const lastWord = words[keep - 1];
  const end = seqStart + lastWord.index + lastWord[0].length;
  if (EPONYM_AFTER.test(text.slice(end, end + 40))) return undefined;
  return { start: seqStart, end };
}

/** Every name in `text` (overlaps allowed; the caller resolves them). */
export function findNames(text: string): PhiFinding[] {
  const lex = nameLexicon();
  const out: PhiFinding[] = [];
  const push = (s: Span | undefined) => s && out.push({ category: 'name', start: s.start, end: s.end });
  for (const [re, strong] of [
    [TITLE, true],
    [LABEL, true],
    [RELATION, false],
  ] as const) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) push(sequence(text, m.index + m[0].length - m[1].length, m[1], lex, strong));
  }
  for (const m of text.matchAll(SURNAME_FIRST)) {
    if (lex.last.has(m[1].toLowerCase()) && lex.first.has(m[2].toLowerCase())) push({ start: m.index, end: m.index + m[0].length });
  }
  // Capitalised words in running text that the lexicon knows as no common word: a name it has not heard of.
  for (const m of text.matchAll(CAPITALISED_RUN)) {
    const words = m[0].split(/[ \t]+/);
    if (words.some((w) => lex.common.has(w.toLowerCase()) || NOT_A_PERSON.test(w))) continue;
    push(sequence(text, m.index, m[0], lex, false));
  }
  // A given name the lexicon knows, with the capitalised words after it (a surname, a middle initial).
  CAPITALISED.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = CAPITALISED.exec(text)) !== null) {
    if (!lex.first.has(m[0].toLowerCase())) continue;
    const rest = new RegExp(`^(?:[ \\t]+(?:${INITIAL}|${WORD})){0,2}`).exec(text.slice(m.index + m[0].length, m.index + m[0].length + 60));
    const span = sequence(text, m.index, m[0] + (rest?.[0] ?? ''), lex, false);
    if (span) {
      push(span);
      CAPITALISED.lastIndex = span.end;
    }
  }
  return out;
}
