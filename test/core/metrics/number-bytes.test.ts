import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { writeNumber } from '../../../src/core/metrics/number-bytes';

/** writeNumber's text for v. */
function written(v: number): string {
  const buf = new Uint8Array(40);
  return Buffer.from(buf.subarray(0, writeNumber(buf, 0, v))).toString('latin1');
}

describe('writeNumber: the bytes of String(v)', () => {
  it('any double, as String() writes it', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => assert.equal(written(x), String(x))),
      { numRuns: 50_000 },
    );
  });

  it('decimals of up to 17 significant digits at any scale (the values logs hold), as String() writes them', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 17 });
    fc.assert(
      fc.property(fc.boolean(), digits, fc.integer({ min: -30, max: 30 }), (neg, d, e) => {
        const x = Number(`${neg ? '-' : ''}${d}e${e}`);
        assert.equal(written(x), String(x), `${d}e${e}`);
      }),
      { numRuns: 50_000 },
    );
  });

  it('doubles of any mantissa at the sizes metrics have (16-17 digit shortest forms, found exactly), as String() writes them', () => {
    const f = new Float64Array(1);
    const u = new Uint32Array(f.buffer);
    /** The double of stored mantissa bits hi:lo (20 + 32), biased exponent e and sign `neg`, written as String() writes it. */
    const writesAsString = (hi: number, lo: number, e: number, neg: boolean) => {
      u[0] = lo >>> 0;
      u[1] = (((neg ? 0x800 : 0) | e) << 20) | hi;
      assert.equal(written(f[0]!), String(f[0]!));
    };
    const mantissaHigh = fc.integer({ min: 0, max: 0xfffff });
    const exponent = fc.integer({ min: 1023 - 26, max: 1023 + 52 });
    fc.assert(fc.property(mantissaHigh, fc.nat(), exponent, fc.boolean(), writesAsString), { numRuns: 100_000 });
    // Mantissas whose low bits are all zero, so that a × 10^k's fraction ends in whole zero words.
    const zeroLowBits = fc.constantFrom(0, 0x80000000, 0xffff0000, 0x10000);
    fc.assert(fc.property(mantissaHigh, zeroLowBits, exponent, fc.boolean(), writesAsString), { numRuns: 20_000 });
    // Exactly halfway between two 16-digit decimals (String() picks one by its own rule), and next to powers of two
    // (whose lower neighbour is half as far as the upper one).
    for (const x of [617962191228041.75, 607732645115727.25, 89313617273332.875, 2 ** -20, 2 ** 40 + 0.5, 1 - 2 ** -53])
      assert.equal(written(x), String(x));
    for (let e = -90; e <= 60; e++)
      for (const x of [2 ** e, 2 ** e * (1 + 2 ** -52), 2 ** e * (1 - 2 ** -53)]) assert.equal(written(x), String(x), `2^${e}`);
  });

  it('integers, powers of ten and the edges of the positional and exponent forms', () => {
    const xs = [0, -0, 1, -1, 7, 10, 100, 1e6, 123456789012345, 999999999999999, 1e15, 1e20, 1e21, 1e22, 2 ** 53, 0.1, 0.5];
    xs.push(1e-6, 1e-7, 1.5e-7, 0.000001234, 1e-8, 5e-5, 0.0001, 4096, 2e-6, 1192, -0.883, 8.7690763277933, 0.30000000000000004);
    for (let e = -25; e <= 25; e++) xs.push(10 ** e, 3 * 10 ** e, 1.25 * 10 ** e, -(10 ** e));
    for (const x of xs) assert.equal(written(x), String(x), String(x));
  });
});
