/**
 * Reads a plain decimal (`-0.0123`, `5.011037519201636`, `1e-06`, `.5`, `3.`) straight from bytes into the same double
 * `Number()` gives, without making a string: the hot path of a metrics log, where almost every value is Python's
 * 16-17 digit repr of a float. Up to 15 digits use Clinger's fast path (one exact multiply or divide); 16-19 digits use
 * the Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per Second", 2021, with the table and rounding of
 * the fast_float library), its 64×64-bit products done in 16-bit pieces so every step is exact in doubles. Anything
 * else (more digits, hex, `nan`, a result outside the range below) is left to Number().
 */

import { mul64, prod } from './mul64';

const MAX_DIGITS = 19;
/** Decimal exponents the power table covers: every result in this range is a normal double. */
export const MIN_Q = -100;
export const MAX_Q = 100;

/** Exact powers of ten as doubles (10^22 is the largest one that is exact). */
const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const TWO_53 = 2 ** 53;
const TWO_32 = 2 ** 32;

/**
 * 5^q as a 128-bit number with its top bit set (truncated for q >= 0; rounded up, floor(2^(z+127) / 5^-q) + 1 with
 * 2^z > 5^-q, for q < 0), the table fast_float uses: four 32-bit words per q, most significant first.
 */
export const POW5 = ((): Uint32Array => {
  const t = new Uint32Array((MAX_Q - MIN_Q + 1) * 4);
  const top = 1n << 127n;
  const limit = 1n << 128n;
  for (let q = MIN_Q; q <= MAX_Q; q++) {
    let c: bigint;
    if (q >= 0) c = 5n ** BigInt(q);
    else {
      const p = 5n ** BigInt(-q);
      c = (1n << BigInt(p.toString(2).length + 127)) / p + 1n;
    }
    while (c < top) c <<= 1n;
    while (c >= limit) c >>= 1n;
    const i = (q - MIN_Q) * 4;
    for (let w = 0; w < 4; w++) t[i + w] = Number((c >> BigInt(96 - 32 * w)) & 0xffffffffn);
  }
  return t;
})();

/**
 * POW5 into a WebAssembly module's memory at `at` (wasm/decimal.ts's table: each q's two 64-bit halves, high first, as
 * little-endian u64), for the line scanner and the JSON line writer.
 */
export function writePow5Table(memory: ArrayBuffer, at: number): void {
  const pow5 = new Uint32Array(memory, at, POW5.length);
  for (let q = 0; q < pow5.length; q += 4) {
    pow5[q] = POW5[q + 1]!;
    pow5[q + 1] = POW5[q]!;
    pow5[q + 2] = POW5[q + 3]!;
    pow5[q + 3] = POW5[q + 2]!;
  }
}

/** 2^e for the exponents a normal double can have, built by exact doubling and halving. */
const POW2 = ((): Float64Array => {
  const t = new Float64Array(2046);
  let x = 1;
  for (let e = 0; e <= 971; e++, x *= 2) t[e + 1074] = x;
  x = 0.5;
  for (let e = -1; e >= -1074; e--, x /= 2) t[e + 1074] = x;
  return t;
})();

/**
 * w × 10^q correctly rounded, for 1 <= w < 10^19 given as its digits' value split at 10^k (w = head × 10^k + tail,
 * head < 10^15, k <= 4) and MIN_Q <= q <= MAX_Q, into out.value (negated if `neg`: a double returned from a call is
 * boxed, a field write is not). False where the result would not be a normal double (kept as a guard: MIN_Q..MAX_Q
 * never leaves that range).
 */
function eiselLemire(head: number, k: number, tail: number, q: number, neg: boolean, out: DecimalScan): boolean {
  // w as two 32-bit words: head × 10^k + tail, with head split so each product stays below 2^53.
  const p = POW10[k]!;
  const hHi = Math.floor(head / TWO_32);
  const t = (head - hHi * TWO_32) * p + tail;
  let wHi = hHi * p + Math.floor(t / TWO_32);
  let wLo = t >>> 0;
  // Normalise: shift w left until its top bit is set.
  const lz = wHi !== 0 ? Math.clz32(wHi) : 32 + Math.clz32(wLo);
  if (lz >= 32) {
    wHi = (wLo << (lz - 32)) >>> 0;
    wLo = 0;
  } else if (lz > 0) {
    wHi = ((wHi << lz) | (wLo >>> (32 - lz))) >>> 0;
    wLo = (wLo << lz) >>> 0;
  }
  const i = (q - MIN_Q) * 4;
  mul64(wHi, wLo, POW5[i]!, POW5[i + 1]!);
  let x0 = prod[0]!;
  let x1 = prod[1]!;
  let x2 = prod[2]!;
  let x3 = prod[3]!;
  // The 9 bits below the 55 kept are all ones: the truncated table entry may matter, so add w × its low 64 bits.
  if ((x1 & 0x1ff) === 0x1ff) {
    mul64(wHi, wLo, POW5[i + 2]!, POW5[i + 3]!);
    const lo = x3 + prod[1]!;
    const mid = x2 + prod[0]! + Math.floor(lo / TWO_32);
    x3 = lo >>> 0;
    x2 = mid >>> 0;
    if (mid >= TWO_32) {
      x1 += 1;
      if (x1 >= TWO_32) {
        x1 = 0;
        x0 += 1;
      }
    }
  }
  const upper = x0 >>> 31;
  const shift = upper + 9; // keep 54 bits: the 53 of a double and one to round with
  const below = x1 & ((1 << shift) - 1);
  const last2 = (x1 >>> shift) & 3;
  let power2 = ((217706 * q) >> 16) + 63 + upper - lz + 1023;
  if (power2 <= 0) return false;
  // Round half up, except an exact tie (only possible when 5^q fits in 64 bits) rounds to even.
  let roundUp = last2 & 1;
  if (x2 === 0 && x3 <= 1 && q >= -4 && q <= 23 && last2 === 1 && below === 0) roundUp = 0;
  let mantissa = x0 * (upper ? 2 ** 21 : 2 ** 22) + (x1 >>> (shift + 1)) + roundUp;
  if (mantissa >= TWO_53) {
    mantissa /= 2;
    power2++;
  }
  if (power2 >= 0x7ff) return false;
  const v = mantissa * POW2[power2 - 1075 + 1074]!;
  out.value = neg ? -v : v;
  return true;
}

/** Where scanDecimal leaves its result (reused: the hot path allocates nothing per value). */
export class DecimalScan {
  value = 0;
  /** The index just past the number. */
  end = 0;
}

/**
 * Reads a plain decimal at b[from]: optional sign, digits with at most one '.', at least one digit, optional exponent
 * (`e`/`E`, optional sign, digits); it stops at the first byte that cannot continue it (`to` at the latest). On true,
 * `out.value` is exactly `Number()` of the text from `from` to `out.end` (including -0). False when there is no such
 * number, its exponent is cut short (`1e`, `1e-`), or the fast paths do not apply (more than 19 significant digits, a
 * result outside 1e-100..1e100); the caller then parses the text with Number().
 */
export function scanDecimal(b: Uint8Array, from: number, to: number, out: DecimalScan): boolean {
  return scanDecimalIn(b, new DataView(b.buffer, b.byteOffset, b.length), from, to, out);
}

/**
 * scanDecimal with a view of b's bytes (dv.getInt32(i) reads b[i..i + 4)), made once per buffer by a caller that
 * scans many numbers: it reads four digits at a time.
 */
export function scanDecimalIn(b: Uint8Array, dv: DataView, from: number, to: number, out: DecimalScan): boolean {
  let i = from;
  if (i >= to) return false;
  const neg = b[i] === 45;
  if (neg || b[i] === 43) i++;
  // Significant digits (from the first non-zero one): the first 15 go to head, the next ones to tail (up to 4 used).
  let head = 0;
  let tail = 0;
  let sig = 0;
  let any = false;
  let point = -1; // the index just past the '.', if any
  while (i < to) {
    // Four digits at once where head has room for them (Python's reprs are mostly runs of digits).
    if (sig !== 0 && sig <= 11 && i + 4 <= to) {
      const x = dv.getInt32(i, true);
      if ((((x + 0x46464646) | (x - 0x30303030)) & 0x80808080) === 0) {
        // Each byte a digit (first one lowest): pairs, then the four.
        const p = (x - 0x30303030) * 10 + ((x - 0x30303030) >>> 8);
        head = head * 10000 + (p & 0xff) * 100 + ((p >>> 16) & 0xff);
        sig += 4;
        i += 4;
        continue;
      }
    }
    const d = b[i]! - 48;
    if (d >= 0 && d <= 9) {
      any = true;
      if (sig !== 0 || d !== 0) {
        if (sig < 15) head = head * 10 + d;
        else tail = tail * 10 + d;
        sig++;
      }
    } else if (d === -2 && point < 0) point = i + 1;
    else break;
    i++;
  }
  let scale = point < 0 ? 0 : point - i; // decimal exponent from the position of the point
  if (!any || sig > MAX_DIGITS) return false;
  if (i < to && (b[i] === 101 || b[i] === 69)) {
    if (++i >= to) return false;
    const eneg = b[i] === 45;
    if ((eneg || b[i] === 43) && ++i >= to) return false;
    let e = 0;
    const start = i;
    for (; i < to; i++) {
      const d = b[i]! - 48;
      if (d < 0 || d > 9) break;
      if (e < 100000) e = e * 10 + d;
    }
    if (i === start) return false;
    scale += eneg ? -e : e;
  }
  out.end = i;
  if (sig === 0) {
    out.value = neg ? -0 : 0;
    return true;
  }
  return decimalToDouble(head, sig > 15 ? sig - 15 : 0, tail, scale, neg, out);
}

/**
 * ±(head × 10^k + tail) × 10^q correctly rounded into out.value (head < 10^15, tail < 10^k, k <= 4, head > 0): what
 * Number() gives for those digits. False when the fast paths do not apply (q outside MIN_Q..MAX_Q and no exact Clinger
 * step).
 */
export function decimalToDouble(head: number, k: number, tail: number, q: number, neg: boolean, out: DecimalScan): boolean {
  // Clinger: w exact in a double and 10^|q| exact, so one correctly rounded operation gives the answer.
  const w = k === 0 ? head : head * POW10[k]! + tail;
  if (w < TWO_53 && q >= -22 && q <= 22) {
    const v = q < 0 ? w / POW10[-q]! : w * POW10[q]!;
    out.value = neg ? -v : v;
    return true;
  }
  return q >= MIN_Q && q <= MAX_Q && eiselLemire(head, k, tail, q, neg, out);
}
