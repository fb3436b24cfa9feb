import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findCandidates, newCandidates, WORD_SRC, type Candidates } from '../../../src/core/phi/text-candidates';
import { phiCorpus, pubmedContexts } from './phi-corpus';

/*
 * findCandidates reads a string a character at a time for what one global regex scan finds (its definition, below). Both
 * must give the same candidates, in the same order, on real notes and on strings made of the characters where the two
 * could part: capitals after a word character, apostrophes, hyphens, `’`, `_`, hex digits around colons, non-ASCII.
 */
const PASS = new RegExp(`\\d+|\\b${WORD_SRC}|@|:(?=[0-9a-fA-F]{1,4}:)`, 'g');

function byRegex(text: string): Candidates {
  const out = newCandidates();
  PASS.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = PASS.exec(text)) !== null) {
    const s = m[0];
    const c = s.charCodeAt(0);
    if (c <= 57) out.runs.push(m.index, m.index + s.length);
    else if (c === 58) out.hexColon = true;
    else if (c === 64) out.ats.push(m.index);
    else {
      out.words.push(m.index, m.index + s.length);
      out.wordText.push(s);
      if (s.length > 2 && (s.includes('-') || s.includes("'") || s.includes('’'))) out.innerBoundary = true;
    }
  }
  return out;
}

function characterFuzz(count: number): string[] {
  let seed = 2026;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const ALPHABET = ['A', 'M', 'Z', 'a', 'b', 'f', 'g', 'z', '0', '7', '9', '-', "'", '’', '_', '@', ':', ' ', '\n', '.', 'é', 'É', '😀'];
  const WORDS = [
    'Smith-Jones',
    "O'May",
    'O’Keefe',
    'McDONALD',
    'AB-Cd',
    'Ab-',
    'A-b',
    'fe80:',
    '::1',
    ':abcd:',
    ':abcde:',
    'x_Y',
    '2001:db8::',
  ];
  return Array.from({ length: count }, () => {
    let s = '';
    for (let j = Math.floor(rnd() * 40); j > 0; j--)
      s += rnd() < 0.2 ? WORDS[Math.floor(rnd() * WORDS.length)] : ALPHABET[Math.floor(rnd() * ALPHABET.length)];
    return s;
  });
}

describe('findCandidates', () => {
  it('finds what the global regex scan finds: notes, abstracts and character-level fuzz', async () => {
    const texts = [...(await phiCorpus()).map((d) => d.text), ...pubmedContexts().flat(), ...characterFuzz(20000)];
    const reused = newCandidates();
    for (const text of texts) {
      const got = findCandidates(text, reused);
      assert.deepEqual({ ...got }, { ...byRegex(text) }, `candidates differ in ${JSON.stringify(text)}`);
    }
  });

  it('reads a capitalised word to its last lower-case letter, across a hyphen to a capital, never after a word character', () => {
    const c = findCandidates('Seen by O’Keefe-Smith and McDONALD-Jones, x_Ray, AB-Cd at 10:30; fe80::1 to a@b', newCandidates());
    // McDONALD ends at its last lower-case letter; Jones and Cd start after the hyphen; x_Ray has no word boundary.
    assert.deepEqual(c.wordText, ['Seen', 'O’Keefe-Smith', 'Mc', 'Jones', 'Cd']);
    assert.deepEqual(c.words, [0, 4, 8, 21, 26, 28, 35, 40, 52, 54]);
    assert.deepEqual(c.runs, [58, 60, 61, 63, 67, 69, 71, 72]);
    assert.deepEqual(c.ats, [77]);
    assert.equal(c.innerBoundary, true);
    assert.equal(c.hexColon, false);
    assert.equal(findCandidates('fe80:12ab:1', newCandidates()).hexColon, true);
  });
});
