import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { maskNames, maskString, maskStrings, maskText } from '../../../src/core/phi/mask-text';
import { describeMasked, maskedSegments } from '../../../src/core/phi/masked-segments';

// Phone numbers are planted because both the stand-in detector and the real one find them.
const PHONE = '617-555-0142';
const OTHER = '508-555-0199';

describe('masking identifiers', () => {
  it('turns each finding into its category, with the text around it kept as it is', () => {
    assert.deepEqual(maskText(`Call ${PHONE} or ${OTHER}.`), [
      { text: 'Call ' },
      { category: 'phone' },
      { text: ' or ' },
      { category: 'phone' },
      { text: '.' },
    ]);
    assert.deepEqual(maskText(PHONE), [{ category: 'phone' }]);
    assert.deepEqual(maskText('no identifier here'), [{ text: 'no identifier here' }]);
    assert.deepEqual(maskText(''), []);
  });

  it('leaves no trace of the found text in what it returns', () => {
    const text = `Pt reached at ${PHONE}; daughter ${OTHER}`;
    for (const out of [JSON.stringify(maskText(text)), maskString(text), JSON.stringify(maskStrings({ note: [text] }))]) {
      assert.ok(!out.includes(PHONE) && !out.includes(OTHER), out);
      assert.ok(!out.includes('0142') && !out.includes('0199'), out);
    }
  });

  it('sends a masked string in one piece that reads back as the same segments', () => {
    const text = `Call ${PHONE} now`;
    assert.deepEqual(maskedSegments(maskString(text)), maskText(text));
    assert.deepEqual(maskedSegments('plain text'), [{ text: 'plain text' }]);
    assert.deepEqual(maskedSegments(''), []);
  });

  it('lets no text fake a finding, and drops a finding cut off by shortened text', () => {
    const forged = maskString('see \uE000phone\uE001 here');
    assert.deepEqual(maskedSegments(forged), [{ text: 'see \uFFFDphone\uFFFD here' }]);
    const cut = maskString(`Call ${PHONE}`).slice(0, -2);
    assert.deepEqual(maskedSegments(cut), [{ text: 'Call ' }]);
    assert.deepEqual(maskedSegments(`${cut}…`), [{ text: 'Call ' }, { text: '…' }]);
    // An unknown category between markers is not a chip.
    assert.deepEqual(maskedSegments('\uE000nonsense\uE001'), [{ text: '\uE000nonsense\uE001' }]);
  });

  it('masks every string of a JSON value and every object key; other values untouched', () => {
    const row = {
      prompt: [{ role: 'user', content: `phone ${PHONE}` }],
      score: 1,
      ok: true,
      none: null,
      [PHONE]: 'a column name',
      extra: { [PHONE]: 'home', '617-555-0199': 'work' },
    };
    const masked = maskStrings(row) as Record<string, unknown> & typeof row;
    assert.deepEqual(maskedSegments(masked.prompt[0]!.content), [{ text: 'phone ' }, { category: 'phone' }]);
    assert.equal(masked.prompt[0]!.role, 'user');
    assert.equal(masked.score, 1);
    assert.equal(masked.ok, true);
    assert.equal(masked.none, null);
    assert.ok(!JSON.stringify(masked).includes('617-555'), 'no number is left, in a value or a key');
    // Two keys that mask the same are both kept, the second numbered.
    assert.deepEqual(Object.keys(masked.extra).map(maskedSegments), [[{ category: 'phone' }], [{ category: 'phone' }, { text: ' 2' }]]);
    assert.deepEqual(Object.values(masked.extra), ['home', 'work']);
    // A column name is masked as the row's key is, so the view finds the row's value under its heading.
    const columns = maskNames(['prompt', PHONE, 'extra']);
    assert.equal(columns[0], 'prompt');
    assert.equal(masked[columns[1]!], 'a column name');
    // Survives JSON as it is (the dataset view shows values as JSON).
    assert.deepEqual(JSON.parse(JSON.stringify(masked)), masked);
  });

  it('says how many identifiers of which categories were masked', () => {
    assert.equal(describeMasked({}), 'No identifiers masked');
    assert.equal(describeMasked({ phone: 1 }), '1 identifier masked (1 phone)');
    assert.equal(describeMasked({ date: 1, phone: 2 }), '3 identifiers masked (2 phone, 1 date)');
  });
});
