import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findPhi } from '../../../src/core/phi/find-phi';

/** The findings as `category:text`, in order. */
const found = (text: string) => findPhi(text).map((f) => `${f.category}:${text.slice(f.start, f.end)}`);

describe('findPhi', () => {
  it('finds each Safe Harbor category in the forms clinical notes write them', () => {
    assert.deepEqual(found('Patient: John Smith, MRN 00482913, seen by Dr. Emily Chen on 03/14/2021.'), [
      'name:John Smith',
      'mrn:00482913',
      'name:Emily Chen',
      'date:03/14/2021',
    ]);
    assert.deepEqual(found('Call (617) 555-0142 or fax: 617-555-0199. Email jsmith@example.org, https://portal.example.org/x'), [
      'phone:(617) 555-0142',
      'fax:617-555-0199',
      'email:jsmith@example.org',
      'url:https://portal.example.org/x',
    ]);
    assert.deepEqual(found('Lives at 42 Elm Street, Apt 3B, Springfield, MA 01103. IP 192.168.1.20. SSN 123-45-6789.'), [
      'address:42 Elm Street, Apt 3B',
      'address:Springfield',
      'zip:01103',
      'ip:192.168.1.20',
      'ssn:123-45-6789',
    ]);
    assert.deepEqual(found('Member ID: XJ4492013. License #: MD448201. Pacemaker serial number: PM-20391X. DEA: AB1234563.'), [
      'plan:XJ4492013',
      'licence:MD448201',
      'device:PM-20391X',
      'licence:AB1234563',
    ]);
    assert.deepEqual(found('A 92-year-old woman. Aged 101. Her husband, Robert, was present. Name: Smith, John.'), [
      'age:92',
      'age:101',
      'name:Robert',
      'name:Smith, John',
    ]);
    assert.deepEqual(found('Seen March 3, 2020 and 14 Feb 2019; DOB: 1948-07-02; admitted on 3/14; surgery in May 2019.'), [
      'date:March 3, 2020',
      'date:14 Feb 2019',
      'date:1948-07-02',
      'date:3/14',
      'date:May 2019',
    ]);
    // A timestamp is one identifier with its time and zone, as health-record exports and parquet timestamp columns write it.
    assert.deepEqual(found('Admitted 2023-04-01T10:05:00.000Z, seen 2023-04-02 08:30, out 2023-04-03T09:00:00+01:00.'), [
      'date:2023-04-01T10:05:00.000Z',
      'date:2023-04-02 08:30',
      'date:2023-04-03T09:00:00+01:00',
    ]);
  });

  it('leaves clinical look-alikes alone', () => {
    for (const text of [
      'BP 142/91 mmHg, HR 88, RR 18, SpO2 96% on room air.',
      'GCS 14/15. Pain 7/10. Apgar 8/9. Score 3/14.',
      'Metformin 500 mg twice daily; insulin glargine 24 units; WBC 11,500/mm3; platelets 250,000/mm3.',
      'ICD-10 E11.9 and J45.909; HbA1c 7.2%; 95% CI 1.03-1.69; pH 7.32.',
      'A 3-day history of cough; a 67-year-old man; his 89-year-old mother; aged 45 at diagnosis; in 2019.',
      'Graves disease in remission; positive Murphy sign; Parkinson disease; Glasgow Coma Scale 13.',
      'Seen by cardiology and neurology; physical therapy consulted. May be discharged tomorrow.',
    ]) {
      assert.deepEqual(found(text), [], text);
    }
  });

  it('does not run a name across a line break', () => {
    assert.deepEqual(found('Address: 9267 Grady Turnpike\nLeanna Hickle was referred.'), [
      'address:9267 Grady Turnpike',
      'name:Leanna Hickle',
    ]);
  });

  it('gives offsets into the string it was given, unicode included', () => {
    const text = 'Patiënt — “Dr. Émile Zola” ☎ 617-555-0142';
    const f = findPhi(text).find((x) => x.category === 'phone');
    assert.equal(text.slice(f?.start, f?.end), '617-555-0142');
  });
});
