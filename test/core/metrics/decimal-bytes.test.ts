import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DecimalScan, scanDecimal } from '../../../src/core/metrics/decimal-bytes';
import { decimalStrings } from './decimal-strings';

/** scanDecimal over the whole text: its value when it reads all of it, else undefined (the caller would use Number()). */
function fast(text: string): number | undefined {
  const b = Buffer.from(text);
  const out = new DecimalScan();
  return scanDecimal(b, 0, b.length, out) && out.end === b.length ? out.value : undefined;
}

/** Agrees with Number() bit for bit (Object.is tells -0 from 0) wherever it gives a value. */
function agrees(text: string): boolean {
  const v = fast(text);
  return v === undefined || Object.is(v, Number(text));
}

/** Significant digits as scanDecimal counts them (from the first non-zero digit, trailing zeros included). */
function significant(text: string): number {
  return text.split(/e/i)[0]!.replace(/[-+.]/g, '').replace(/^0+/, '').length;
}

/** An odd 54-bit integer (± 1): exactly halfway between two doubles, or next to such a tie. */
const tie = fc
  .tuple(fc.bigInt({ min: 0n, max: (1n << 52n) - 1n }), fc.constantFrom(-1n, 0n, 1n))
  .map(([m, d]) => (1n << 53n) + 2n * m + 1n + d);

describe('scanDecimal: bytes to the double Number() gives', () => {
  it('Python reprs of random doubles (the 16-17 digit values a verl log is made of), bit for bit', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const s = String(x);
        assert.ok(agrees(s), s);
        if (Math.abs(x) >= 1e-80 && Math.abs(x) <= 1e80 && significant(s) <= 19)
          assert.notEqual(fast(s), undefined, `${s} takes the fast path`);
      }),
      { numRuns: 20_000 },
    );
  });

  it('every precision and notation (toPrecision 1-19, toExponential, fixed), and numbers near powers of ten', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e30, max: 1e30, noNaN: true }), fc.integer({ min: 1, max: 19 }), (x, p) => {
        for (const s of [x.toPrecision(p), x.toExponential(p), x.toFixed(Math.min(p, 20))]) assert.ok(agrees(s), s);
      }),
      { numRuns: 20_000 },
    );
    for (let e = -100; e <= 100; e++)
      for (const m of ['1', '9.999999999999999999', '1.000000000000000001', '4.9406564584124654'])
        assert.ok(agrees(`${m}e${e}`), `${m}e${e}`);
  });

  it('arbitrary digit strings: signs, leading zeros, a point anywhere, exponents, up to 19 significant digits and past', () => {
    fc.assert(
      fc.property(decimalStrings, (s) => assert.ok(agrees(s), s)),
      { numRuns: 50_000 },
    );
  });

  it('exact ties between two doubles round to even, written as integers, decimals and with exponents', () => {
    fc.assert(
      fc.property(tie, fc.integer({ min: -3, max: 9 }), (t, e) => {
        const texts: string[] = [];
        if (e >= 0) {
          const n = (t << BigInt(e)).toString();
          texts.push(n, `${n}.000`, `${n.slice(0, 1)}.${n.slice(1)}e${n.length - 1}`);
        } else {
          const n = (t * 5n ** BigInt(-e)).toString();
          texts.push(`${n.slice(0, n.length + e)}.${n.slice(n.length + e)}`, `${n}e${e}`);
        }
        for (const s of texts) {
          assert.ok(agrees(s), s);
          if (significant(s) <= 19) assert.notEqual(fast(s), undefined, `${s} takes the fast path`);
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it('stops at the first byte that cannot continue the number, and refuses what Number() alone can read', () => {
    const out = new DecimalScan();
    const b = Buffer.from('x:-0.0123 - y');
    assert.ok(scanDecimal(b, 2, b.length, out));
    assert.deepEqual([out.value, out.end], [-0.0123, 9]);
    for (const s of ['', '-', '.', 'e5', '1e', '1e-', 'nan', 'inf', ' 1', '0x10', '1'.repeat(20), '1e-400'])
      assert.equal(fast(s), undefined, s);
    assert.ok(Object.is(fast('-0.000'), -0));
    // Runs of four bytes read at once: digits next to UTF-8, a point or the end.
    const runs = Buffer.from('é1234é 0.12345678é 5.1234é9');
    for (const [from, value, end] of [
      [2, 1234, 6],
      [9, 0.12345678, 19],
      [22, 5.1234, 28],
    ] as const) {
      assert.ok(scanDecimal(runs, from, runs.length, out));
      assert.deepEqual([out.value, out.end], [value, end]);
    }
    assert.equal(fast('1e-06'), 1e-6);
  });
});
