import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Faker, en } from '@faker-js/faker';
import { LocalHost } from '../../../src/core/remote/local-host';
import { openDataset } from '../../../src/core/datasets/open-dataset';
import type { PhiCategory } from '../../../src/core/phi/phi-categories';

/*
 * The PHI evaluation corpus: the 200 real MEDEC clinical notes (CC BY 4.0, demo/data/medec/PROVENANCE.md), which hold no
 * identifiers, each with invented identifiers planted in a header, a sign-off and inside the note, in the forms clinical
 * notes write them, and clinical look-alikes planted beside them (142/91, 14/15, 500 mg, E11.9, "a 67-year-old"). Each also
 * holds one real PubMedQA abstract (MIT, demo/data/pubmedqa/PROVENANCE.md) with no identifier in it: eponyms, places, trial
 * and instrument names, for precision.
 * Invented with a seeded Faker, so the corpus is the same on every run.
 */

export interface GoldSpan {
  category: PhiCategory;
  start: number;
  end: number;
}
export interface CorpusDoc {
  text: string;
  gold: GoldSpan[];
}

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '../../..');
const MEDEC = join(ROOT, 'demo/data/medec/medec-ms-validation-first200.csv');
const PUBMEDQA = join(ROOT, 'demo/data/pubmedqa/ori_pqal-first200.json');

/** The context paragraphs of each of the 200 real PubMedQA abstracts (no identifiers in them). */
export function pubmedContexts(): string[][] {
  return Object.values(JSON.parse(readFileSync(PUBMEDQA, 'utf8')) as Record<string, { CONTEXTS: string[] }>).map((r) => r.CONTEXTS);
}

/** Builds a string piece by piece, recording where each planted identifier lands. */
class Doc {
  text = '';
  gold: GoldSpan[] = [];
  add(s: string): this {
    this.text += s;
    return this;
  }
  phi(category: PhiCategory, s: string): this {
    this.gold.push({ category, start: this.text.length, end: this.text.length + s.length });
    this.text += s;
    return this;
  }
}

type Planter = (d: Doc, f: Faker) => void;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const digits = (f: Faker, n: number) => f.string.numeric({ length: n, allowLeadingZeros: true });
const MONTHS: readonly string[] = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function date(f: Faker): string {
  const d = f.date.between({ from: '1990-01-01', to: '2025-12-31' });
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  const month = MONTHS[m - 1] ?? 'January';
  return f.helpers.arrayElement([
    `${pad(m)}/${pad(day)}/${y}`,
    `${m}/${day}/${String(y).slice(2)}`,
    `${y}-${pad(m)}-${pad(day)}`,
    `${month} ${day}, ${y}`,
    `${day} ${month.slice(0, 3)} ${y}`,
    `${pad(day)}-${month.slice(0, 3)}-${y}`,
    `${month} ${y}`,
    `${month.slice(0, 3)} ${day}`,
  ]);
}

function phone(f: Faker): string {
  const [a, b, c] = [
    f.helpers.arrayElement(['617', '508', '212', '415', '303', '713']),
    `${f.number.int({ min: 200, max: 999 })}`,
    digits(f, 4),
  ];
  return f.helpers.arrayElement([
    `(${a}) ${b}-${c}`,
    `${a}-${b}-${c}`,
    `${a}.${b}.${c}`,
    `+1 ${a} ${b} ${c}`,
    `${a}-${b}-${c} x${digits(f, 3)}`,
  ]);
}

/** A Social Security number the SSA could issue. */
function ssn(f: Faker): string {
  const area = f.number.int({ min: 1, max: 899 });
  const s = `${pad(area === 666 ? 667 : area, 3)}-${pad(f.number.int({ min: 1, max: 99 }))}-${pad(f.number.int({ min: 1, max: 9999 }), 4)}`;
  return f.datatype.boolean() ? s : s.replace(/-/g, '');
}

/** A DEA number with its checksum. */
function dea(f: Faker): string {
  const d = Array.from({ length: 6 }, () => f.number.int({ min: 0, max: 9 }));
  const [a = 0, b = 0, c = 0, e = 0, g = 0, h = 0] = d;
  const check = (a + c + g + 2 * (b + e + h)) % 10;
  return `${f.helpers.arrayElement(['A', 'B', 'F', 'M'])}${f.string.alpha({ length: 1, casing: 'upper' })}${d.join('')}${check}`;
}

const STATES = ['MA', 'NY', 'CA', 'TX', 'IL', 'WA', 'OH', 'GA'];

/** Each category's forms: a label or sentence around the invented value, as notes write it. */
const PLANTERS: Record<PhiCategory, Planter[]> = {
  name: [
    (d, f) => d.add('Patient: ').phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add('\n'),
    (d, f) => d.add('Seen today with Dr. ').phi('name', f.person.lastName()).add(' from cardiology.\n'),
    (d, f) => d.add('Signed by: ').phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add(', MD\n'),
    (d, f) => d.add('Her husband, ').phi('name', f.person.firstName('male')).add(', was at the bedside.\n'),
    (d, f) =>
      d
        .add(f.helpers.arrayElement(['Mr. ', 'Mrs. ', 'Ms. ']))
        .phi('name', f.person.lastName())
        .add(' tolerated the procedure well.\n'),
    (d, f) => d.add('Emergency contact: ').phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add(' (daughter)\n'),
    (d, f) => d.phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add(' was referred for follow-up.\n'),
    (d, f) => d.add('Discussed with ').phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add(', the attending.\n'),
    (d, f) => d.add('Name: ').phi('name', `${f.person.lastName()}, ${f.person.firstName()}`).add('\n'),
    (d, f) => d.add("Spoke with the patient's son ").phi('name', f.person.firstName('male')).add(' by phone.\n'),
    (d, f) => d.add('cc: ').phi('name', `${f.person.firstName()} ${f.person.lastName()}`).add(', MD\n'),
    (d, f) =>
      d
        .phi('name', `${f.person.firstName()} ${f.person.lastName()}`)
        .add(` is a ${f.number.int({ min: 20, max: 80 })}-year-old woman seen for follow-up.\n`),
  ],
  date: [
    (d, f) => d.add('Admitted on ').phi('date', date(f)).add('.\n'),
    (d, f) => d.add('DOB: ').phi('date', date(f)).add('\n'),
    (d, f) => d.add('Last seen in clinic ').phi('date', date(f)).add(' with similar symptoms.\n'),
    (d, f) =>
      d
        .add('Surgery on the ')
        .phi(
          'date',
          `${f.helpers.arrayElement(['3rd', '14th', '21st', '2nd'])} of ${f.helpers.arrayElement(MONTHS)} ${f.number.int({ min: 1995, max: 2025 })}`,
        )
        .add('.\n'),
    (d, f) =>
      d
        .add('Follow-up: ')
        .phi('date', `${f.number.int({ min: 1, max: 12 })}.${f.number.int({ min: 1, max: 28 })}.${f.number.int({ min: 2000, max: 2025 })}`)
        .add('\n'),
  ],
  age: [
    (d, f) =>
      d
        .add('A ')
        .phi('age', String(f.number.int({ min: 90, max: 104 })))
        .add('-year-old resident of a nursing home.\n'),
    (d, f) =>
      d
        .add('Age: ')
        .phi('age', String(f.number.int({ min: 90, max: 104 })))
        .add('\n'),
    (d, f) =>
      d
        .phi('age', String(f.number.int({ min: 90, max: 104 })))
        .add(f.helpers.arrayElement([' y/o', ' yo', ' years old']))
        .add(' with dementia.\n'),
    (d, f) =>
      d
        .add('The patient is a ')
        .phi('age', f.helpers.arrayElement(['ninety-two', 'ninety-seven', 'one hundred', 'ninety']))
        .add('-year-old widow.\n'),
  ],
  phone: [
    (d, f) => d.add('Phone: ').phi('phone', phone(f)).add('\n'),
    (d, f) => d.add('Call the patient at ').phi('phone', phone(f)).add(' with results.\n'),
  ],
  fax: [
    (d, f) =>
      d
        .add(f.helpers.arrayElement(['Fax: ', 'fax ', 'Fax number: ']))
        .phi('fax', phone(f))
        .add('\n'),
  ],
  email: [
    (d, f) => d.add('Email: ').phi('email', f.internet.email()).add('\n'),
    (d, f) => d.add('Portal message from ').phi('email', f.internet.email()).add('.\n'),
  ],
  ssn: [
    (d, f) =>
      d
        .add(f.helpers.arrayElement(['SSN: ', 'SSN ', 'Social security number: ']))
        .phi('ssn', ssn(f))
        .add('\n'),
  ],
  mrn: [
    (d, f) =>
      d
        .add(f.helpers.arrayElement(['MRN: ', 'MRN ', 'Medical record #: ', 'Acct #: ', 'Account number: ']))
        .phi('mrn', digits(f, f.number.int({ min: 6, max: 9 })))
        .add('\n'),
    (d, f) =>
      d
        .add('Chart ')
        .phi('mrn', `${f.helpers.arrayElement(['MR', 'H', 'MGH'])}${digits(f, 7)}`)
        .add(' reviewed.\n'),
    (d, f) => d.add('Record ').phi('mrn', digits(f, 9)).add(' updated.\n'),
  ],
  address: [
    (d, f) =>
      d
        .add('Address: ')
        .phi('address', f.location.streetAddress({ useFullAddress: f.datatype.boolean() }))
        .add('\n'),
    (d, f) => d.add('Lives alone at ').phi('address', f.location.streetAddress()).add('.\n'),
  ],
  zip: [
    // A city is a geographic subdivision smaller than a state: an identifier too.
    (d, f) =>
      d
        .phi('address', f.location.city())
        .add(`, ${f.helpers.arrayElement(STATES)} `)
        .phi('zip', f.location.zipCode('#####'))
        .add('\n'),
    (d, f) => d.add('ZIP: ').phi('zip', f.location.zipCode('#####-####')).add('\n'),
  ],
  url: [
    (d, f) =>
      d
        .add('Results portal: ')
        .phi('url', `${f.internet.url()}/patient/${digits(f, 6)}`)
        .add('\n'),
  ],
  ip: [(d, f) => d.add('Logged in from ').phi('ip', f.internet.ipv4()).add('.\n')],
  device: [
    (d, f) =>
      d
        .add('Pacemaker serial number: ')
        .phi('device', `${f.string.alpha({ length: 3, casing: 'upper' })}${digits(f, 6)}`)
        .add('\n'),
    (d, f) =>
      d
        .add('Device ID: ')
        .phi('device', `${digits(f, 2)}-${f.string.alphanumeric({ length: 8, casing: 'upper' })}${digits(f, 1)}`)
        .add('\n'),
  ],
  licence: [
    (d, f) => d.add('DEA: ').phi('licence', dea(f)).add('\n'),
    (d, f) =>
      d
        .add('License #: ')
        .phi('licence', `MD${digits(f, 6)}`)
        .add('\n'),
  ],
  plan: [
    (d, f) =>
      d
        .add('Member ID: ')
        .phi('plan', `${f.string.alpha({ length: 3, casing: 'upper' })}${digits(f, 9)}`)
        .add('\n'),
    (d, f) => d.add('Insurance policy number: ').phi('plan', digits(f, 10)).add('\n'),
  ],
};

/** Clinical values that look like identifiers and are not. */
const LOOK_ALIKES = [
  'BP 142/91 mmHg, HR 88, RR 18, SpO2 96% on room air.',
  'GCS 14/15. Pain 7/10. Apgar scores 8/9.',
  'Metformin 500 mg twice daily; lisinopril 10 mg daily; insulin glargine 24 units at night.',
  'WBC 11,500/mm3, hemoglobin 10.2 g/dL, platelets 250,000/mm3, sodium 134 mEq/L, creatinine 1.4 mg/dL.',
  'ICD-10 E11.9, I10 and J45.909 documented. HbA1c 7.2%.',
  'She reports a 3-day history of cough and a 2-week history of fatigue.',
  'A 67-year-old man with an 89-year-old mother; aged 45 at diagnosis.',
  'Temperature 38.2 C (100.8 F). pH 7.32, pCO2 48 mmHg.',
  'Graves disease in remission; positive Murphy sign; Glasgow Coma Scale 13.',
  'Follow up in 2 weeks; repeat CT in 3 to 6 months. Dose 0.5 mg/kg every 6 hours.',
  'QTc 452 ms, PR 0.16 s, ejection fraction 35-40%.',
  'Seen by cardiology and neurology; physical therapy consulted.',
];

/** The corpus: one document per MEDEC note, each planting one to three identifiers of every category. */
export async function phiCorpus(seed = 16): Promise<CorpusDoc[]> {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  const abstracts = pubmedContexts().map((c) => c.join(' '));
  const reader = await openDataset(new LocalHost(), MEDEC);
  const docs: CorpusDoc[] = [];
  for await (const row of reader.rows()) {
    const note = String((row.value as Record<string, unknown>).Text ?? '');
    const d = new Doc();
    const planters = f.helpers.shuffle(
      Object.values(PLANTERS).flatMap((ps) => f.helpers.arrayElements(ps, { min: 1, max: Math.min(2, ps.length) })),
    );
    const half = Math.ceil(planters.length / 2);
    for (const p of planters.slice(0, half)) p(d, f);
    d.add(`${f.helpers.arrayElement(LOOK_ALIKES)}\n`);
    d.add(`${note}\n`);
    d.add(`${f.helpers.arrayElement(LOOK_ALIKES)}\n`);
    d.add(`${abstracts[docs.length % abstracts.length]}\n`);
    for (const p of planters.slice(half)) p(d, f);
    docs.push({ text: d.text, gold: d.gold });
  }
  return docs;
}
