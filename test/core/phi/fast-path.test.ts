import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPhi } from '../../../src/core/phi/find-phi';
import { phiCorpus, pubmedContexts } from './phi-corpus';

/*
 * The detector tries each pattern only where a candidate pass says a match can start (text-candidates.ts). Before, it
 * scanned every string with every pattern: test/fixtures/phi/detector-golden.json holds what that detector (commit
 * a75513b) found in the strings below, as [category, start, end] (no text). The findings must stay the same, span for
 * span, or the speed-up changed what a scan finds.
 */

/** Strings made of the pieces the patterns look for (labels, titles, months, number shapes, separators), seeded. */
function fuzzed(count: number): string[] {
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const digits = () => Array.from({ length: 1 + Math.floor(rnd() * 11) }, () => Math.floor(rnd() * 10)).join('');
  const PIECES = [
    ...['Dr.', 'Mr', 'Mrs.', 'Patient:', 'Name:', 'pt:', 'husband', 'wife,', 'seen by', 'named', 'John', 'Smith', 'O’Keefe'],
    ...["O'May", 'Smith-Jones', 'Smith-March', 'May', 'March', 'Mar', 'Sept.', 'Jan.', 'December', 'of', 'the', 'The', 'She'],
    ...['Graves', 'disease', 'Hospital', 'Cardiology', 'Rosina', 'Keeling', 'was', 'referred', 'J.', ',', '.', ':', '#', '-'],
    ...['/', '(', ')', '+', '@', ' ', '  ', '\t', '\n', 'MRN', 'MR-', 'mrn:', 'Medical record', 'record', 'acct #', 'Member ID:'],
    ...['Insurance', 'policy', 'group', 'Medicare', 'MBI', 'License', 'lic.', 'DEA:', 'NPI', "driver's license", 'S/N', 'SN'],
    ...['device id', 'Pacemaker serial number:', 'implant', 'lot', 'number', 'no.', 'ID', 'fax', 'Fax:', 'SSN', 'Social Security no.'],
    ...['age', 'aged', 'Age:', 'ninety', 'Ninety-two', 'one hundred and one', 'years old', 'year-old', 'y/o', 'yo', 'years of age'],
    ...['P.O. Box', 'PO Box', 'ZIP code', 'postal code', 'http://', 'https://', 'www.', 'example.org', 'jo.doe', 'x@example.com'],
    ...['fe80', 'abcd', ':12ab:', '2001:db8:0:0:0:0:2:1', 'Elm', 'Street', 'Ave.', 'Apt', '#4B', 'N', '5th', 'Springfield', ', MA'],
    ...['CA', 'mm Hg', 'mg', 'units', 'since', 'DOB', 'd.o.b.', 'admitted', 'st', 'T', 'Z', '+05:00', 'ext.', 'AB', 'XJ', 'Hg', 'C'],
  ];
  const shape = () =>
    pick([
      () => digits(),
      () => `${digits()}-${digits()}-${digits()}`,
      () => `(${digits()}) ${digits()}-${digits()}`,
      () => `${digits()}.${digits()}.${digits()}.${digits()}`,
      () => `${digits()}/${digits()}/${digits()}`,
      () => `+1 ${digits()} ${digits()} ${digits()}`,
      () => pick(['9', '10', '11', '95', '101', '1617-555-0142', '2020-03-01T10:00Z']),
    ])();
  return Array.from({ length: count }, () => {
    let s = '';
    for (let j = 5 + Math.floor(rnd() * 60); j > 0; j--)
      s += (rnd() < 0.3 ? shape() : pick(PIECES)) + pick([' ', ' ', '', '\n', ', ', '. ']);
    return s;
  });
}

describe('findPhi against what the detector found before its candidate passes', () => {
  it('finds the same identifiers, span for span, in the evaluation corpus, PubMedQA abstracts and fuzzed strings', async () => {
    const texts = [...(await phiCorpus()).map((d) => d.text), ...pubmedContexts().flat(), ...fuzzed(5000)];
    const golden = JSON.parse(readFileSync(join(__dirname, '../../fixtures/phi/detector-golden.json'), 'utf8')) as unknown[][];
    assert.equal(texts.length, golden.length, 'the same strings as when the findings were recorded');
    let differ = 0;
    texts.forEach((text, i) => {
      const want = JSON.stringify(golden[i]);
      const got = JSON.stringify(findPhi(text).map((f) => [f.category, f.start, f.end]));
      if (got !== want && differ++ === 0) assert.equal(got, want, `the first string whose findings differ:\n${text}`);
    });
    assert.equal(differ, 0);
  });
});
