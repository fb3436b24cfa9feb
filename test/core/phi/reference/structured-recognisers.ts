/* The structured recognisers as they were before candidates: see find-phi.ts here. */
import type { PhiCategory, PhiFinding } from '../../../../src/core/phi/phi-categories';

/*
 * Pattern recognisers for the structured Safe Harbor identifiers, after Microsoft Presidio's (a pattern, context words that
 * must precede it, a validity check) and Philter's clinical rules (what a clinical look-alike is: 142/91, 14/15, 500 mg,
 * "3-day history", E11.9). A recogniser may report only part of its match (the value after a label).
 */

interface Recogniser {
  /** The category, or which one by the match (one pattern for several labelled numbers is one pass instead of several). */
  category: PhiCategory | ((m: RegExpExecArray) => PhiCategory);
  pattern: RegExp;
  /** Which capture group is the identifier (default: the whole match). */
  group?: number;
  /** Returns false for a match that only looks like the identifier. */
  valid?: (m: RegExpExecArray, text: string) => boolean;
  /**
   * A cheap test that the text can hold a match at all, so most strings skip the pattern: lower-case substrings of the
   * lower-cased text (one of them must be there), or a regex with a literal start.
   */
  needs?: readonly string[] | RegExp;
  /**
   * For a number: every match starts at most `lead` characters before a run of digits that `run` accepts (by its length
   * and the character after it), so the pattern (sticky) is tried only there instead of at every character of the text.
   */
  anchor?: { lead: number; run: (digits: number, next: string) => boolean };
}

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
/** A month name or its abbreviation: the literal start a month-name date needs. */
const MONTH_GATE = /(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/;
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
 * group says the category. Not gated: a gate on the labels would scan as much text as the pattern does.
 */
function labelledNumbers(): Recogniser {
  const labels = NUMBER_LABELS.map(([, l]) => `(${l})`).join('|');
  const value = NUMBER_LABELS.length + 1;
  return {
    category: (m) => NUMBER_LABELS[m.slice(1, value).findIndex((g) => g !== undefined)]?.[0] ?? 'mrn',
    pattern: new RegExp(`\\b(?:${labels})\\s*(?:(?:number|num|no\\.?|#|id|ID)\\s*)?[:#]?\\s*([A-Z0-9][A-Z0-9-]{3,29})\\b`, 'gi'),
    group: value,
    valid: (m) => /\d/.test(m[value] ?? ''),
  };
}

/** What may follow the first run of digits of a phone number. */
const SEPARATOR = /^[\s.()-]$/;

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

const RECOGNISERS: Recogniser[] = [
  { category: 'email', pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g, needs: ['@'] },
  {
    category: 'url',
    pattern: /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+[^\s<>"')\].,;:!?]/gi,
    needs: ['http', 'www.'],
  },
  {
    category: 'ip',
    pattern: /\b(?:\d{1,3}\.){3}\d{1,3}\b(?!\.\d)/y,
    valid: ipv4Valid,
    anchor: { lead: 0, run: (n, c) => n <= 3 && c === '.' },
  },
  { category: 'ip', pattern: /\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b/gi, needs: /:[0-9a-fA-F]{1,4}:/ },
  // Fax before phone: the same number shape after a fax label is a fax.
  {
    category: 'fax',
    pattern: new RegExp(`\\bfax(?:\\s*(?:number|no\\.?|#))?\\s*[:#]?\\s*(${PHONE})(?!\\d)`, 'gi'),
    group: 1,
    needs: ['fax'],
  },
  { category: 'ssn', pattern: /\b\d{3}-\d{2}-\d{4}\b/y, valid: ssnValid, anchor: { lead: 0, run: (n, c) => n === 3 && c === '-' } },
  {
    category: 'ssn',
    pattern: /\b(?:SSN|social security(?: number| no\.?)?)\s*[:#]?\s*(\d{3}[- ]?\d{2}[- ]?\d{4})\b/gi,
    group: 1,
    needs: ['ssn', 'social'],
  },
  // `+` or `(` may open the number; its first run is the 1, the area code or both (1617-555-0142).
  {
    category: 'phone',
    pattern: new RegExp(`(?<![\\w/])${PHONE}(?![\\w/])`, 'y'),
    anchor: { lead: 1, run: (n, c) => n <= 4 && SEPARATOR.test(c) },
  },
  // Numbers a label names: medical record / account, plan and beneficiary, licence, device.
  labelledNumbers(),
  { category: 'licence', pattern: /\b[ABCDEFGHJKLMPRSTUX][A-Z]\d{7}\b/y, valid: deaValid, anchor: { lead: 2, run: (n) => n === 7 } },
  // Unlabelled record numbers: a letter prefix and six or more digits (MR0048213, MRN-00482), or eight to ten digits in text.
  { category: 'mrn', pattern: /\b[A-Z]{1,4}-?\d{6,10}\b/y, anchor: { lead: 5, run: (n) => n >= 6 && n <= 10 } },
  {
    // Not a string that is the number alone: that is a row's own id (a PubMed id in `extra_info.id`), not a patient's.
    category: 'mrn',
    pattern: /(?<![\d.,/-])\d{8,10}(?![\d.,/]|\s?(?:mg|mcg|g|ml|mL|units?|IU|cells|\/))/y,
    valid: (m, text) => m[0].length !== text.trim().length,
    anchor: { lead: 0, run: (n) => n >= 8 && n <= 10 },
  },
  // Dates: numeric with a year, ISO, month names; a bare month/day only after a word that introduces a date.
  {
    category: 'date',
    pattern: /(?<![\d.])\b(0?[1-9]|1[0-2])[/.-](0?[1-9]|[12]\d|3[01])[/.-](\d{4}|\d{2})\b(?![/.-]\d)/y,
    anchor: { lead: 0, run: (n, c) => n <= 2 && (c === '/' || c === '.' || c === '-') },
  },
  {
    // ISO 8601, with its time and zone when it has them (2023-04-01T10:00:00.000Z, 2023-04-01 10:00): the whole timestamp is
    // the identifier, as exports of health records and parquet timestamp columns (read as ISO strings) write it.
    category: 'date',
    pattern:
      /\b(?:1[89]\d\d|20\d\d)-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?(?![\w:])|\b)/y,
    anchor: { lead: 0, run: (n, c) => n === 4 && c === '-' },
  },
  {
    // March 3, 2020 | 3 March 2020 | 03-Mar-2020 | March 2020
    category: 'date',
    pattern: new RegExp(
      `\\b(?:(?:${MONTHS})\\s+${DAY}(?:,?\\s+${YEAR})?|${DAY}(?:\\s+of)?\\s+(?:${MONTHS}),?\\s+${YEAR}|${DAY}-(?:${MONTHS})-(?:${YEAR}|\\d{2})|(?:${MONTHS})\\.?,?\\s+${YEAR})\\b`,
      'g',
    ),
    needs: MONTH_GATE,
  },
  {
    category: 'date',
    pattern: /\b(0?[1-9]|1[0-2])\/(0?[1-9]|[12]\d|3[01])\b(?!\/|\s*(?:mm\s*hg|mmhg))/iy,
    valid: (m, text) => monthDayValid(m[1] ?? '', m[2] ?? '') && DATE_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index)),
    anchor: { lead: 0, run: (n, c) => n <= 2 && c === '/' },
  },
  // Ages over 89 (Safe Harbor keeps younger ages).
  {
    category: 'age',
    pattern: /\b(9\d|1[01]\d)(?=(?:[-\s]?(?:years?|yrs?|y)[-\s]?(?:old|\/o|o\b)|[-\s]?yo\b|\s+years?\s+of\s+age))/iy,
    anchor: { lead: 0, run: (n) => n === 2 || n === 3 },
  },
  { category: 'age', pattern: /\b(?:aged?|age:)\s*(9\d|1[01]\d)\b/gi, group: 1, needs: ['age'] },
  {
    category: 'age',
    pattern:
      /\b(?:ninety(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|one hundred(?:(?: and)?[- ](?:one|two|three|four|five|six|seven|eight|nine|ten))?)(?=[- ]years?[- ]old)/gi,
    needs: ['ninety', 'hundred'],
  },
  // Street addresses (a number, up to four words and a USPS street suffix, then a unit), and a city, state before a ZIP code.
  {
    category: 'address',
    pattern: new RegExp(
      `\\b\\d{1,6}[ \\t]+(?:(?:[NSEW]\\.?|\\d+(?:st|nd|rd|th)|[A-Z][A-Za-z'’-]*[a-z])[ \\t]+){1,4}(?:${STREET_SUFFIXES})\\b\\.?(?:,?[ \\t]+(?:Apt|Apartment|Suite|Ste|Unit|#)\\.?[ \\t]*[A-Z0-9-]+)?`,
      'y',
    ),
    anchor: { lead: 0, run: (n, c) => n <= 6 && (c === ' ' || c === '\t') },
  },
  {
    category: 'address',
    pattern: new RegExp(`\\b((?:[A-Z][a-z]+[ \\t]){0,2}[A-Z][a-z]+)(?=,[ \\t]*(?:${STATES})[ \\t]+\\d{5}\\b)`, 'g'),
    needs: /,[ \t]*[A-Z]{2}[ \t]+\d{5}/,
  },
  { category: 'address', pattern: /\b(?:P\.?\s?O\.?\s+Box|PO Box)\s+\d+/gi, needs: ['box'] },
  // The state as a lookbehind, so the match starts at the ZIP code's first digit.
  {
    category: 'zip',
    pattern: new RegExp(`(?<=\\b(?:${STATES}),?[ \\t]+)\\d{5}(?:-\\d{4})?\\b`, 'y'),
    anchor: { lead: 0, run: (n) => n === 5 },
  },
  { category: 'zip', pattern: /\b(?:zip(?:\s*code)?|postal code)\s*[:#]?\s*(\d{5}(?:-\d{4})?)\b/gi, group: 1, needs: ['zip', 'postal'] },
  { category: 'zip', pattern: /\b\d{5}-\d{4}\b/y, anchor: { lead: 0, run: (n, c) => n === 5 && c === '-' } },
];

/** Where each run of digits starts and ends in `text` (the places an `anchor` recogniser is tried from), into `out`. */
function digitRuns(text: string, out: number[]): void {
  out.length = 0;
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(start, i);
      start = -1;
    }
  }
}

/** Reused by every call: a flat list of [start, end) pairs. */
const runs: number[] = [];

/** Every structured identifier in `text` the recognisers find (overlaps allowed; the caller resolves them). */
export function findStructured(text: string): PhiFinding[] {
  const out: PhiFinding[] = [];
  const found = (r: Recogniser, m: RegExpExecArray) => {
    const value = (r.group ? m[r.group] : m[0]) ?? '';
    const start = r.group ? m.index + m[0].lastIndexOf(value) : m.index;
    out.push({ category: typeof r.category === 'string' ? r.category : r.category(m), start, end: start + value.length });
  };
  digitRuns(text, runs);
  let lower: string | undefined;
  for (const r of RECOGNISERS) {
    if (r.anchor) {
      // The matches a global scan finds, in the same order: only the positions no match can start at are skipped.
      const { lead, run } = r.anchor;
      let from = 0;
      for (let k = 0; k < runs.length; k += 2) {
        const d = runs[k]!;
        const end = runs[k + 1]!;
        if (d < from || !run(end - d, text[end] ?? '')) continue;
        for (let at = Math.max(from, d - lead); at <= d; at++) {
          r.pattern.lastIndex = at;
          const m = r.pattern.exec(text);
          if (m === null || (r.valid && !r.valid(m, text))) continue;
          found(r, m);
          from = r.pattern.lastIndex;
          at = from - 1;
        }
      }
      continue;
    }
    if (r.needs instanceof RegExp ? !r.needs.test(text) : r.needs && !r.needs.some((n) => (lower ??= text.toLowerCase()).includes(n)))
      continue;
    r.pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = r.pattern.exec(text)) !== null) {
      // A look-alike may hide a real match that starts inside it ("Pacemaker serial number: PM-2039"): look again from the next character.
      if (r.valid && !r.valid(m, text)) {
        r.pattern.lastIndex = m.index + 1;
        continue;
      }
      found(r, m);
    }
  }
  return out;
}
