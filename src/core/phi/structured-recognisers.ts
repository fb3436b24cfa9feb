import type { PhiCategory, PhiFinding } from './phi-categories';
import { isDigitCode, isWordCode, keywordPass, type Candidates } from './text-candidates';

/*
 * Pattern recognisers for the structured Safe Harbor identifiers, after Microsoft Presidio's (a pattern, context words that
 * must precede it, a validity check) and Philter's clinical rules (what a clinical look-alike is: 142/91, 14/15, 500 mg,
 * "3-day history", E11.9). A recogniser may report only part of its match (the value after a label).
 */

interface Recogniser {
  /** The category, or which one by the match (one pattern for several labelled numbers is one pass instead of several). */
  category: PhiCategory | ((m: RegExpExecArray) => PhiCategory);
  /** Sticky: tried only where a match may start (see `anchor`, `keywords`, `at`, `month`); global where `gate` says. */
  pattern: RegExp;
  /** Which capture group is the identifier (default: the whole match). */
  group?: number;
  /** Returns false for a match that only looks like the identifier. */
  valid?: (m: RegExpExecArray, text: string) => boolean;
  /**
   * For a number: every match starts at most `lead` characters before a run of digits of `min` to `max` digits, followed
   * by one of the characters of `next` (when given), that `ok` accepts (when given), so the pattern is tried only there
   * instead of at every character of the text.
   */
  anchor?: Anchor;
  /** For a pattern that starts with a word at a word boundary: those words (regex source, any case). */
  keywords?: readonly string[];
  /** For an email address: tried from the start of the run of address characters before each `@`. */
  at?: true;
  /** For a date with a month name: tried where a month name or a day number starts. */
  month?: true;
  /** For the rest: a cheap test that the text can hold a match at all; the pattern (global) scans the text only then. */
  gate?: (text: string, c: Candidates) => boolean;
}

interface Anchor {
  lead: number;
  min: number;
  max: number;
  next?: string;
  ok?: (text: string, start: number, end: number) => boolean;
  /** What a match that starts before the run opens with (char code): the pattern is not tried where it cannot start. */
  opens?: (c: number) => boolean;
}

const isDigit = (text: string, i: number) => isDigitCode(text.charCodeAt(i));
const isCapitalCode = (c: number) => c >= 65 && c <= 90;
const isCapital = (text: string, i: number) => isCapitalCode(text.charCodeAt(i));
/** `\s` by char code: ASCII first, the regex only for the rest (a test per run of digits costs more than the run's patterns). */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || (c > 127 && /\s/.test(String.fromCharCode(c)));

/** USPS street suffixes (Publication 28, appendix C1), spelled out and abbreviated, and the British Close. */
const STREET_SUFFIXES = [
  'Alley|Annex|Arcade|Avenue|Ave|Bayou|Beach|Bend|Bluffs?|Bottom|Boulevard|Blvd|Branch|Bridge|Brooks?|Burgs?|Bypass|Camp|Canyon',
  'Cape|Causeway|Centers?|Circles?|Cir|Cliffs?|Close|Club|Commons?|Corners?|Course|Courts?|Ct|Coves?|Creek|Crescent|Crest|Crossing',
  'Crossroads?|Curve|Dale|Dam|Divide|Drives?|Dr|Estates?|Expressway|Extensions?|Falls?|Ferry|Fields?|Flats?|Fords?|Forest|Forges?',
  'Forks?|Fort|Freeway|Gardens?|Gateway|Glens?|Greens?|Groves?|Harbors?|Haven|Heights|Highway|Hwy|Hills?|Hollow|Inlet|Islands?',
  'Isle|Junctions?|Keys?|Knolls?|Lakes?|Landing|Lane|Ln|Lights?|Loaf|Locks?|Lodge|Loop|Mall|Manors?|Meadows?|Mews|Mills?|Mission',
  'Motorway|Mount|Mountains?|Neck|Orchard|Oval|Overpass|Parks?|Parkways?|Pkwy|Pass|Passage|Path|Pike|Pines?|Place|Pl|Plains?|Plaza',
  'Points?|Ports?|Prairie|Radial|Ramp|Ranch|Rapids?|Rest|Ridges?|River|Roads?|Rd|Route|Row|Rue|Run|Shoals?|Shores?|Skyway|Springs?',
  'Spurs?|Squares?|Sq|Station|Stravenue|Stream|Streets?|St|Summit|Terrace|Ter|Throughway|Trace|Track|Trafficway|Trail|Trl|Tunnel',
  'Broadway|Turnpike|Underpass|Unions?|Valleys?|Viaduct|Views?|Villages?|Ville|Vista|Walks?|Wall|Ways?|Wells?',
].join('|');
/** US state and territory codes (a ZIP code follows one). */
const STATES = 'A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[DLNA]|K[SY]|LA|M[EDAINSOT]|N[EVHJMYCD]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[TA]|W[AVIY]|PR|GU|VI';
const MONTHS =
  'Jan(?:uary|\\.)?|Feb(?:ruary|\\.)?|Mar(?:ch|\\.)?|Apr(?:il|\\.)?|May|June?|July?|Aug(?:ust|\\.)?|Sep(?:t(?:ember|\\.)?|\\.)?|Oct(?:ober|\\.)?|Nov(?:ember|\\.)?|Dec(?:ember|\\.)?';
/**
 * A month name or its abbreviation as a whole run of letters (every month-name date has one, at a word's start, and a
 * letter after it ends no such date: "Marked", "Decreased" are ruled out before the pattern).
 */
const MONTH_WORD =
  /(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)(?![A-Za-z])/y;
const DAY = '(?:0?[1-9]|[12]\\d|3[01])(?:st|nd|rd|th)?';
const YEAR = '(?:1[89]\\d\\d|20\\d\\d)';
/** Words after which a bare month/day like 3/14 is a date (a score like 14/15 has none). */
const DATE_CONTEXT =
  /(?:\b(?:on|since|from|until|dated?|dob|born|admitted|discharged|seen|visit|surgery|onset|by|through)\b[:\s]*|\bd\.?o\.?b\.?[:\s]*)$/i;

/** The labels of numbers a label names, by category. */
const NUMBER_LABELS: [PhiCategory, string][] = [
  ['mrn', 'MRN|MR|medical record|med rec|record|account|acct|patient id|hospital|chart|encounter|visit id'],
  ['plan', 'health plan|insurance|insurance id|member|member id|policy|subscriber|beneficiary|group|medicaid|medicare|HICN|MBI'],
  ['licence', "licen[cs]e|lic\\.?|DEA|NPI|driver'?s licen[cs]e|certificate"],
  ['device', 'serial|S\\/N|SN|device|device id|UDI|pacemaker|implant|lot'],
];

/**
 * A label, then `:`/`#`/`no.` and spaces, then a value with at least one digit (the number a label names); the label's
 * group says the category.
 */
function labelledNumbers(): Recogniser {
  const labels = NUMBER_LABELS.map(([, l]) => `(${l})`).join('|');
  const value = NUMBER_LABELS.length + 1;
  return {
    category: (m) => NUMBER_LABELS[m.slice(1, value).findIndex((g) => g !== undefined)]?.[0] ?? 'mrn',
    pattern: new RegExp(`\\b(?:${labels})\\s*(?:(?:number|num|no\\.?|#|id|ID)\\s*)?[:#]?\\s*([A-Z0-9][A-Z0-9-]{3,29})\\b`, 'iy'),
    group: value,
    valid: (m) => /\d/.test(m[value] ?? ''),
    keywords: NUMBER_LABELS.map(([, l]) => l),
  };
}

/**
 * Whether a phone number can start at the run of digits [d, end) or at the `+` or `(` before it (PHONE's shapes): three
 * digits then `[\s.-]` and a digit, or `(` three digits `)`; or a 1 alone (then `(`, or `[\s.-]` and `(` or a digit) or
 * a 1 and three digits then `[\s.-]` and a digit. Most runs (doses, scores) are ruled out here instead of by the pattern.
 */
function phoneStart(text: string, d: number, end: number): boolean {
  const n = end - d;
  const sep = text.charCodeAt(end);
  const spaceDotDash = sep === 46 || sep === 45 || isSpace(sep);
  if (n === 3) return (spaceDotDash && isDigit(text, end + 1)) || (sep === 41 && text.charCodeAt(d - 1) === 40);
  if (text.charCodeAt(d) !== 49) return false;
  if (n === 1) return sep === 40 || (spaceDotDash && (isDigit(text, end + 1) || text.charCodeAt(end + 1) === 40));
  return n === 4 && spaceDotDash && isDigit(text, end + 1);
}

/**
 * After a run's separator at `end`: a run of one to `max` digits, one of `seps` and a digit (the second group of an IPv4
 * address or of a numeric date: a decimal such as 37.5 has none).
 */
function groupAfter(text: string, end: number, max: number, seps: string): boolean {
  let j = end + 1;
  while (isDigit(text, j)) j++;
  const n = j - end - 1;
  return n >= 1 && n <= max && isDigit(text, j + 1) && seps.includes(text[j]!);
}

/** US phone shapes: (617) 555-0142, 617-555-0142, 617.555.0142, +1 617 555 0142, with an optional extension. */
const PHONE = '(?:\\+?1[\\s.-]?)?(?:\\(\\d{3}\\)\\s?|\\d{3}[\\s.-])\\d{3}[\\s.-]\\d{4}(?:\\s?(?:x|ext\\.?)\\s?\\d{1,5})?';

function ipv4Valid(m: RegExpExecArray): boolean {
  return m[0].split('.').every((o) => Number(o) <= 255 && (o.length === 1 || o[0] !== '0'));
}

/** Social Security numbers the SSA never issues (area 000, 666, 9xx; group 00; serial 0000), as Presidio's UsSsnRecognizer. */
function ssnValid(m: RegExpExecArray): boolean {
  const d = m[0].replace(/\D/g, '');
  const area = d.slice(0, 3);
  return area !== '000' && area !== '666' && area[0] !== '9' && d.slice(3, 5) !== '00' && d.slice(5) !== '0000' && !/^(\d)\1+$/.test(d);
}

/** DEA registration number: two letters and seven digits whose checksum holds (Presidio's MedicalLicenseRecognizer). */
function deaValid(m: RegExpExecArray): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, check] = m[0].slice(2).split('').map(Number);
  return (a + c + e + 2 * (b + d + f)) % 10 === check;
}

function monthDayValid(mo: string, day: string): boolean {
  const m = Number(mo);
  const d = Number(day);
  return m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/** 9x or 1[01]x, then `-`, a space or `y` (the age patterns' lookahead: "95-year-old", "101 yo", "92y"). */
function ageDigits(text: string, d: number, end: number): boolean {
  const n = end - d;
  if (n === 2 ? text[d] !== '9' : text[d] !== '1' || (text[d + 1] !== '0' && text[d + 1] !== '1')) return false;
  const next = text.charCodeAt(end);
  return next === 45 || next === 121 || next === 89 || isSpace(next);
}

/** After the spaces after the number, a capital or a digit (a street name, a direction or an ordinal: "42 Elm", "9 N."). */
function wordAfterSpaces(text: string, _: number, end: number): boolean {
  let i = end;
  while (text[i] === ' ' || text[i] === '\t') i++;
  return isCapital(text, i) || isDigit(text, i);
}

const RECOGNISERS = sameShapes([
  { category: 'email', pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/y, at: true },
  {
    category: 'url',
    pattern: /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+[^\s<>"')\].,;:!?]/iy,
    keywords: ['https?:\\/\\/', 'www\\.'],
  },
  {
    category: 'ip',
    pattern: /\b(?:\d{1,3}\.){3}\d{1,3}\b(?!\.\d)/y,
    valid: ipv4Valid,
    anchor: { lead: 0, min: 1, max: 3, next: '.', ok: (t, _, end) => groupAfter(t, end, 3, '.') },
  },
  { category: 'ip', pattern: /\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b/gi, gate: (_, c) => c.hexColon },
  // Fax before phone: the same number shape after a fax label is a fax.
  {
    category: 'fax',
    pattern: new RegExp(`\\bfax(?:\\s*(?:number|no\\.?|#))?\\s*[:#]?\\s*(${PHONE})(?!\\d)`, 'iy'),
    group: 1,
    keywords: ['fax'],
  },
  { category: 'ssn', pattern: /\b\d{3}-\d{2}-\d{4}\b/y, valid: ssnValid, anchor: { lead: 0, min: 3, max: 3, next: '-' } },
  {
    category: 'ssn',
    pattern: /\b(?:SSN|social security(?: number| no\.?)?)\s*[:#]?\s*(\d{3}[- ]?\d{2}[- ]?\d{4})\b/iy,
    group: 1,
    keywords: ['ssn', 'social security'],
  },
  // `+` or `(` may open the number; its first run is the 1, the area code or both (1617-555-0142).
  {
    category: 'phone',
    pattern: new RegExp(`(?<![\\w/])${PHONE}(?![\\w/])`, 'y'),
    anchor: {
      lead: 1,
      min: 1,
      max: 4,
      ok: phoneStart,
      // Before a run (a non-digit), a phone number can only open with `+` or `(`.
      opens: (c) => c === 43 || c === 40,
    },
  },
  // Numbers a label names: medical record / account, plan and beneficiary, licence, device.
  labelledNumbers(),
  {
    category: 'licence',
    pattern: /\b[ABCDEFGHJKLMPRSTUX][A-Z]\d{7}\b/y,
    valid: deaValid,
    anchor: { lead: 2, min: 7, max: 7, ok: (t, d) => isCapital(t, d - 1), opens: isCapitalCode },
  },
  // Unlabelled record numbers: a letter prefix and six or more digits (MR0048213, MRN-00482), or eight to ten digits in text.
  {
    category: 'mrn',
    pattern: /\b[A-Z]{1,4}-?\d{6,10}\b/y,
    anchor: { lead: 5, min: 6, max: 10, ok: (t, d) => isCapital(t, d - 1) || t[d - 1] === '-', opens: isCapitalCode },
  },
  {
    // Not a string that is the number alone: that is a row's own id (a PubMed id in `extra_info.id`), not a patient's.
    category: 'mrn',
    pattern: /(?<![\d.,/-])\d{8,10}(?![\d.,/]|\s?(?:mg|mcg|g|ml|mL|units?|IU|cells|\/))/y,
    valid: (m, text) => m[0].length !== text.trim().length,
    anchor: { lead: 0, min: 8, max: 10 },
  },
  // Dates: numeric with a year, ISO, month names; a bare month/day only after a word that introduces a date.
  {
    category: 'date',
    pattern: /(?<![\d.])\b(0?[1-9]|1[0-2])[/.-](0?[1-9]|[12]\d|3[01])[/.-](\d{4}|\d{2})\b(?![/.-]\d)/y,
    anchor: { lead: 0, min: 1, max: 2, next: '/.-', ok: (t, _, end) => groupAfter(t, end, 2, '/.-') },
  },
  {
    // ISO 8601, with its time and zone when it has them (2023-04-01T10:00:00.000Z, 2023-04-01 10:00): the whole timestamp is
    // the identifier, as exports of health records and parquet timestamp columns (read as ISO strings) write it.
    category: 'date',
    pattern:
      /\b(?:1[89]\d\d|20\d\d)-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?(?![\w:])|\b)/y,
    anchor: { lead: 0, min: 4, max: 4, next: '-' },
  },
  {
    // March 3, 2020 | 3 March 2020 | 03-Mar-2020 | March 2020
    category: 'date',
    pattern: new RegExp(
      `\\b(?:(?:${MONTHS})\\s+${DAY}(?:,?\\s+${YEAR})?|${DAY}(?:\\s+of)?\\s+(?:${MONTHS}),?\\s+${YEAR}|${DAY}-(?:${MONTHS})-(?:${YEAR}|\\d{2})|(?:${MONTHS})\\.?,?\\s+${YEAR})\\b`,
      'y',
    ),
    month: true,
  },
  {
    category: 'date',
    pattern: /\b(0?[1-9]|1[0-2])\/(0?[1-9]|[12]\d|3[01])\b(?!\/|\s*(?:mm\s*hg|mmhg))/iy,
    valid: (m, text) => monthDayValid(m[1] ?? '', m[2] ?? '') && DATE_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index)),
    anchor: { lead: 0, min: 1, max: 2, next: '/', ok: (t, _, end) => isDigit(t, end + 1) },
  },
  // Ages over 89 (Safe Harbor keeps younger ages).
  {
    category: 'age',
    pattern: /\b(9\d|1[01]\d)(?=(?:[-\s]?(?:years?|yrs?|y)[-\s]?(?:old|\/o|o\b)|[-\s]?yo\b|\s+years?\s+of\s+age))/iy,
    anchor: { lead: 0, min: 2, max: 3, ok: ageDigits },
  },
  { category: 'age', pattern: /\b(?:aged?|age:)\s*(9\d|1[01]\d)\b/iy, group: 1, keywords: ['age'] },
  {
    category: 'age',
    pattern:
      /\b(?:ninety(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|one hundred(?:(?: and)?[- ](?:one|two|three|four|five|six|seven|eight|nine|ten))?)(?=[- ]years?[- ]old)/iy,
    keywords: ['ninety', 'one hundred'],
  },
  // Street addresses (a number, up to four words and a USPS street suffix, then a unit), and a city, state before a ZIP code.
  {
    category: 'address',
    pattern: new RegExp(
      `\\b\\d{1,6}[ \\t]+(?:(?:[NSEW]\\.?|\\d+(?:st|nd|rd|th)|[A-Z][A-Za-z'’-]*[a-z])[ \\t]+){1,4}(?:${STREET_SUFFIXES})\\b\\.?(?:,?[ \\t]+(?:Apt|Apartment|Suite|Ste|Unit|#)\\.?[ \\t]*[A-Z0-9-]+)?`,
      'y',
    ),
    anchor: { lead: 0, min: 1, max: 6, next: ' \t', ok: wordAfterSpaces },
  },
  {
    category: 'address',
    pattern: new RegExp(`\\b((?:[A-Z][a-z]+[ \\t]){0,2}[A-Z][a-z]+)(?=,[ \\t]*(?:${STATES})[ \\t]+\\d{5}\\b)`, 'g'),
    gate: cityBeforeZip,
  },
  { category: 'address', pattern: /\b(?:P\.?\s?O\.?\s+Box|PO Box)\s+\d+/iy, keywords: ['p\\.?\\s?o\\.?\\s+box', 'po box'] },
  // The state as a lookbehind, so the match starts at the ZIP code's first digit.
  {
    category: 'zip',
    pattern: new RegExp(`(?<=\\b(?:${STATES}),?[ \\t]+)\\d{5}(?:-\\d{4})?\\b`, 'y'),
    anchor: { lead: 0, min: 5, max: 5, ok: (t, d) => t[d - 1] === ' ' || t[d - 1] === '\t' },
  },
  {
    category: 'zip',
    pattern: /\b(?:zip(?:\s*code)?|postal code)\s*[:#]?\s*(\d{5}(?:-\d{4})?)\b/iy,
    group: 1,
    keywords: ['zip', 'postal code'],
  },
  {
    category: 'zip',
    pattern: /\b\d{5}-\d{4}\b/y,
    anchor: { lead: 0, min: 5, max: 5, next: '-', ok: (t, _, end) => isDigit(t, end + 1) },
  },
]);

/**
 * A recogniser with every field present, in one order (absent ones undefined), and so its anchor. The loops below read
 * these fields off every recogniser for every candidate: objects of one shape keep those reads monomorphic, where a shape
 * per recogniser made them cost more than the checks they feed (a string with nothing in it, an id or a source name, took
 * three times as long).
 */
function sameShapes(recognisers: Recogniser[]): Recogniser[] {
  return recognisers.map((r) => {
    const a = r.anchor;
    return {
      category: r.category,
      pattern: r.pattern,
      group: r.group,
      valid: r.valid,
      anchor: a && { lead: a.lead, min: a.min, max: a.max, next: a.next, ok: a.ok, opens: a.opens },
      keywords: r.keywords,
      at: r.at,
      month: r.month,
      gate: r.gate,
    };
  });
}

/** Before a run of digits: `, MA ` (a state code after a comma), as a city before a ZIP code needs. */
const STATE_BEFORE = /(?<=,[ \t]*[A-Z]{2}[ \t]+)/y;

function cityBeforeZip(text: string, c: Candidates): boolean {
  const { runs } = c;
  for (let k = 0; k < runs.length; k += 2) {
    if (runs[k + 1]! - runs[k]! < 5) continue;
    STATE_BEFORE.lastIndex = runs[k]!;
    if (STATE_BEFORE.test(text)) return true;
  }
  return false;
}

const KEYWORDS = keywordPass(RECOGNISERS.flatMap((r) => r.keywords ?? []));
/** What an email address's part before the `@` is made of. */
const ADDRESS_CHAR = /[A-Za-z0-9._%+-]/;
/**
 * What may follow a day number's digits in a month-name date: a space (`3 March`, `3 of March`), `-` (`03-Mar-2020`) or
 * an ordinal's first letter (`3rd`). Where the digit run goes on, the day cannot end there either.
 */
const dayEnds = (c: number) => c === 45 || c === 115 || c === 110 || c === 114 || c === 116 || isSpace(c);

/** Reused by every call, by recogniser: its findings, and where its next match may start (after its last match). */
const foundBy: PhiFinding[][] = RECOGNISERS.map(() => []);
const fromBy: number[] = RECOGNISERS.map(() => 0);
/**
 * The recognisers that found something in this call: only their lists are cleared and read (most strings, an id or a
 * source name, have no finding, and clearing and reading all the lists was much of the cost of scanning them).
 */
const foundIn: number[] = [];
/** By a run's length (11 for longer): the recognisers whose anchor takes a run of that many digits. */
const ANCHORED_BY_LENGTH = Array.from({ length: 12 }, (_, n) =>
  RECOGNISERS.flatMap((r, i) => (r.anchor && n >= r.anchor.min && n <= r.anchor.max ? [i] : [])),
);
/**
 * By the lower-case char code of a keyword's first letter: the recognisers with a keyword that starts with it (one or
 * two), so a keyword's start is tried with those only instead of every recogniser that starts with a word.
 */
const KEYWORDED_BY_FIRST = Array.from({ length: 128 }, (_, c) =>
  RECOGNISERS.flatMap((r, i) => (r.keywords?.some((k) => k.split('|').some((w) => w[0]!.toLowerCase().charCodeAt(0) === c)) ? [i] : [])),
);

/** Tries recogniser `i` (sticky) at `at`; a match it accepts is kept, and the next is looked for from its end. */
function tryAt(i: number, text: string, at: number): boolean {
  const r = RECOGNISERS[i]!;
  r.pattern.lastIndex = at;
  const m = r.pattern.exec(text);
  if (m === null || (r.valid && !r.valid(m, text))) return false;
  found(i, m);
  fromBy[i] = r.pattern.lastIndex;
  return true;
}

function found(i: number, m: RegExpExecArray): void {
  const r = RECOGNISERS[i]!;
  const value = (r.group ? m[r.group] : m[0]) ?? '';
  const start = r.group ? m.index + m[0].lastIndexOf(value) : m.index;
  if (!foundBy[i]!.length) foundIn.push(i);
  foundBy[i]!.push({ category: typeof r.category === 'string' ? r.category : r.category(m), start, end: start + value.length });
}

/**
 * Every structured identifier in `text` the recognisers find (overlaps allowed; the caller resolves them), exactly as a
 * global scan of each pattern in turn finds them: each pattern is tried (sticky) only at the candidates `c` where a
 * match of it can start, in order, and after a match from its end on.
 */
export function findStructured(text: string, c: Candidates): PhiFinding[] {
  if (foundIn.length) {
    for (const i of foundIn) foundBy[i]!.length = 0;
    foundIn.length = 0;
  }
  fromBy.fill(0);
  // Numbers: from each run of digits that the recogniser's anchor accepts.
  const { runs } = c;
  for (let k = 0; k < runs.length; k += 2) {
    const d = runs[k]!;
    const end = runs[k + 1]!;
    const next = text[end] ?? '';
    for (const i of ANCHORED_BY_LENGTH[Math.min(end - d, 11)]!) {
      const a = RECOGNISERS[i]!.anchor!;
      if (d < fromBy[i]! || (a.next !== undefined && !a.next.includes(next)) || (a.ok && !a.ok(text, d, end))) continue;
      for (let at = Math.max(fromBy[i]!, d - a.lead); at <= d; at++) {
        if (at < d && a.opens && !a.opens(text.charCodeAt(at))) continue;
        if (tryAt(i, text, at)) at = fromBy[i]! - 1;
      }
    }
  }
  // Patterns that start with a word: where one of their words starts (the pass is restarted past each start, so a word
  // inside another is found too).
  KEYWORDS.lastIndex = 0;
  let k: RegExpExecArray | null;
  while ((k = KEYWORDS.exec(text)) !== null) {
    const at = k.index;
    KEYWORDS.lastIndex = at + 1;
    for (const i of KEYWORDED_BY_FIRST[text.charCodeAt(at) | 32]!) if (at >= fromBy[i]!) tryAt(i, text, at);
  }
  for (let i = 0; i < RECOGNISERS.length; i++) {
    const r = RECOGNISERS[i]!;
    if (r.at) {
      // From the first of the address characters before each `@` (the pattern's part before the `@` is made of them).
      for (const a of c.ats) {
        let s = a;
        while (s > fromBy[i]! && ADDRESS_CHAR.test(text[s - 1]!)) s--;
        for (let at = s; at < a; at++) if (tryAt(i, text, at)) break;
      }
    } else if (r.month) monthDates(i, text, c);
    else if (r.gate?.(text, c)) {
      r.pattern.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = r.pattern.exec(text)) !== null) {
        // A look-alike may hide a real match that starts inside it: look again from the next character.
        if (r.valid && !r.valid(m, text)) r.pattern.lastIndex = m.index + 1;
        else found(i, m);
      }
    }
  }
  const out: PhiFinding[] = [];
  // By recogniser, as a scan of each pattern in turn finds them (findPhi's sort keeps this order among equal lengths).
  if (foundIn.length > 1) foundIn.sort((a, b) => a - b);
  for (const i of foundIn) for (const f of foundBy[i]!) out.push(f);
  return out;
}

/** Reused by every call: where a month-name date may start. */
const monthStarts: number[] = [];

/**
 * A month-name date starts with a month name or a day number (one or two digits at a word's start). A month name at a
 * word boundary starts a capitalised word, or follows a hyphen or an apostrophe inside one (O’May, Smith-March).
 */
function monthDates(i: number, text: string, c: Candidates): void {
  const { words, wordText, runs } = c;
  if (monthStarts.length) monthStarts.length = 0;
  for (let k = 0; k < words.length; k += 2) {
    const start = words[k]!;
    const word = wordText[k >> 1]!;
    if (isMonthAt(text, start)) monthStarts.push(start);
    if (!c.innerBoundary || word.length < 4) continue;
    for (let j = 1; j < word.length - 1; j++) {
      const ch = word[j];
      if ((ch === '-' || ch === "'" || ch === '’') && isMonthAt(text, start + j + 1)) monthStarts.push(start + j + 1);
    }
  }
  if (!monthStarts.length) return;
  for (let k = 0; k < runs.length; k += 2) {
    const d = runs[k]!;
    if (runs[k + 1]! - d <= 2 && (d === 0 || !isWordCode(text.charCodeAt(d - 1))) && dayEnds(text.charCodeAt(runs[k + 1]!)))
      monthStarts.push(d);
  }
  monthStarts.sort((a, b) => a - b);
  for (const at of monthStarts) if (at >= fromBy[i]!) tryAt(i, text, at);
}

/** The first letters of the months' names (A, D, F, J, M, N, O, S): most words are ruled out before the pattern. */
const MONTH_INITIALS = new Set([65, 68, 70, 74, 77, 78, 79, 83]);

function isMonthAt(text: string, at: number): boolean {
  if (!MONTH_INITIALS.has(text.charCodeAt(at))) return false;
  MONTH_WORD.lastIndex = at;
  return MONTH_WORD.test(text);
}
