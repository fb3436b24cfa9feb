import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JsonLineFormat, type RowTile } from '../../../src/core/metrics/series-json';
import { MetricSeries } from '../../../src/core/metrics/metric-series';

/** A tile of `rows` rows of `columns` columns (column c's row r at c × rows + r), steps 1, 2, ... */
function tile(columns: number, rows: number): RowTile {
  const values = new Float64Array(columns * rows);
  return {
    start: 0,
    rows,
    stride: rows,
    values,
    words: new Uint32Array(values.buffer),
    steps: Array.from({ length: rows }, (_, r) => r + 1),
  };
}

/** One-column lines, written by the WebAssembly writer (through JsonLineFormat), for each of `xs`. */
const format = new JsonLineFormat(['v']);
function written(xs: readonly number[]): string {
  const t = tile(1, xs.length);
  t.values.set(xs);
  const buf = Buffer.alloc(format.longestRow * xs.length);
  return buf.toString('latin1', 0, format.write(buf, 0, t, 0, xs.length));
}
/** What JSON.stringify writes for the same rows. */
const expected = (xs: readonly number[]) => xs.map((x, r) => `{"step":${r + 1},"metrics":{"v":${String(x)}}}\n`).join('');

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
/** The double of stored mantissa bits hi:lo (20 + 32), biased exponent e and sign `neg`. */
function double(hi: number, lo: number, e: number, neg: boolean): number {
  u32[0] = lo >>> 0;
  u32[1] = (((neg ? 0x800 : 0) | e) << 20) | hi;
  return f64[0]!;
}

describe('JsonLineFormat: the WebAssembly writer writes each number as String() does', () => {
  it('any double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => assert.equal(written([x]), expected([x]))),
      { numRuns: 50_000 },
    );
  });

  it('decimals of up to 17 significant digits at any scale (the values logs hold)', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 17 });
    const decimal = fc
      .tuple(fc.boolean(), digits, fc.integer({ min: -30, max: 30 }))
      .map(([neg, d, e]) => Number(`${neg ? '-' : ''}${d}e${e}`));
    fc.assert(
      fc.property(decimal, (x) => assert.equal(written([x]), expected([x]))),
      { numRuns: 50_000 },
    );
  });

  it('doubles of any mantissa at the sizes metrics have (16-17 digit shortest forms), and mantissas whose low bits are zero', () => {
    const exponent = fc.integer({ min: 1023 - 26, max: 1023 + 52 });
    const any = fc.tuple(fc.integer({ min: 0, max: 0xfffff }), fc.nat(), exponent, fc.boolean()).map(([h, l, e, n]) => double(h, l, e, n));
    const zeroLow = fc
      .tuple(fc.integer({ min: 0, max: 0xfffff }), fc.constantFrom(0, 0x80000000, 0xffff0000, 0x10000), exponent, fc.boolean())
      .map(([h, l, e, n]) => double(h, l, e, n));
    for (const [values, numRuns] of [
      [any, 100_000],
      [zeroLow, 20_000],
    ] as const)
      fc.assert(
        fc.property(values, (x) => assert.equal(written([x]), expected([x]))),
        { numRuns },
      );
  });

  it('ties, powers of two and their neighbours, integers, powers of ten and the edges of the positional and exponent forms', () => {
    const xs = [617962191228041.75, 607732645115727.25, 89313617273332.875, 2 ** -20, 2 ** 40 + 0.5, 1 - 2 ** -53];
    for (let e = -90; e <= 60; e++) xs.push(2 ** e, 2 ** e * (1 + 2 ** -52), 2 ** e * (1 - 2 ** -53));
    xs.push(0, -0, 1, -1, 7, 10, 100, 1e6, 123456789012345, 999999999999999, 1e15, 1e20, 1e21, 1e22, 2 ** 53, 0.1, 0.5);
    xs.push(1e-6, 1e-7, 1.5e-7, 0.000001234, 1e-8, 5e-5, 0.0001, 4096, 2e-6, 1192, -0.883, 8.7690763277933, 0.30000000000000004);
    xs.push(5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, -Number.MIN_VALUE, 1.7976931348623157e308);
    for (let e = -25; e <= 25; e++) xs.push(10 ** e, 3 * 10 ** e, 1.25 * 10 ** e, -(10 ** e));
    assert.equal(written(xs), expected(xs));
  });

  it('many columns with rows not logged, NaN and infinities, and rows left to String() among them, as the JavaScript writer writes them', () => {
    const series = new MetricSeries();
    const keys = ['actor/loss', 'critic/score/mean', 'weird "key"\\n', '0', 'ünïcode/κ'];
    const rows = 5000;
    for (let r = 0; r < rows; r++) {
      const metrics: Record<string, number> = {};
      keys.forEach((k, c) => {
        if ((r + c) % 7 === 3) return; // not logged
        const pick = (r * 31 + c * 17) % 97;
        metrics[k] =
          pick === 0
            ? NaN
            : pick === 1
              ? Infinity
              : pick === 2
                ? -Infinity
                : pick === 3
                  ? 5e-324
                  : pick === 4
                    ? 1e21
                    : Math.sin(r + c) * 10 ** ((r % 9) - 4);
      });
      series.add({ step: r * 2 + 1, metrics });
    }
    const columns = series.columnEntries();
    const t = tile(columns.length, rows);
    columns.forEach(([, col], c) => col.copyRows(0, rows, t.words.subarray(c * rows * 2)));
    const out = (wasm: boolean) => {
      const f = new JsonLineFormat(
        columns.map(([k]) => k),
        { wasm },
      );
      const buf = Buffer.alloc(f.longestRow * rows);
      return buf.toString('utf8', 0, f.write(buf, 0, { ...t, steps: series.steps }, 0, rows));
    };
    const js = out(false);
    assert.ok(js.includes('"NaN"') && js.includes('5e-324') && js.includes('1e+21') && js.includes('"-Infinity"'));
    assert.equal(out(true), js);
  });
});
