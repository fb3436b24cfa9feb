/**
 * Writes a finite number as the bytes of `String(v)` (JSON.stringify's text for it) straight into a buffer: the hot
 * path of `medrl metrics --json`, which prints tens of millions of values.
 *
 * String() prints the shortest decimal that reads back as v, the closest to v where several are as short. A double whose
 * shortest decimal has at most 15 significant digits (integers, and the rounded values most metrics are) is found with
 * one multiply: two different decimals of at most 15 significant digits are at least 1e-15 apart relative to their size,
 * while all decimals that round to one double lie within 2.3e-16 of it; so at most one such decimal rounds to a given
 * double, and when one does it is the shortest that does. The others (Python's 16-17 digit reprs) are found exactly:
 * v × 10^k as a 128-bit integer with its fraction, whose 16-digit neighbours are read back (decimalToDouble) to see
 * whether one is v; else the 17-digit one nearest v. What falls outside (subnormals, ties, very large or small values)
 * goes through String(v).
 */
import { decimalToDouble, DecimalScan } from './decimal-bytes';
import { mul64, prod } from './mul64';

/** Exact powers of ten as doubles (10^22 is the largest one that is exact). */
const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/**
 * Writes finite `v` at buf[pos] and returns the index past it. The caller leaves at least 32 bytes of room (String() of
 * a double is at most 25 characters).
 */
export function writeNumber(buf: Uint8Array, pos: number, v: number): number {
  if (v === 0) {
    buf[pos] = 0x30;
    return pos + 1;
  }
  const a = Math.abs(v);
  if (a < 1e15 && Number.isInteger(a)) {
    const hi = Math.floor(a / 1e8);
    return writeDecimal(buf, pos, v < 0, hi, a - hi * 1e8, 0);
  }
  // k: the decimal places that give a 15-digit integer m, estimated, then m = a × 10^k checked exactly (below).
  let k = 14 - decimalExponent(a);
  if (k >= 0 && k <= 22) {
    let m = Math.round(a * POW10[k]!);
    if (m >= 1e15 && k > 0) m = Math.round(a * POW10[--k]!);
    // a × 10^k is off from the exact product by < 0.06, and a 15-digit decimal rounding to a is < 0.12 from it, so
    // Math.round finds that decimal when there is one; the division (exact operands, correctly rounded) checks it.
    if (m < 1e15 && m / POW10[k]! === a) {
      const hi = Math.floor(m / 1e8);
      return writeDecimal(buf, pos, v < 0, hi, m - hi * 1e8, k);
    }
    // No 15-digit decimal reads back as a: 16 or 17 digits, k + 1 or k + 2 decimal places.
    if (k + 2 <= MAX_K && digitsOf(a, k + 1)) {
      const found = nearestReadsBack(a, k + 1);
      if (found > 0) return writeDecimal(buf, pos, v < 0, cHi, cLo, k + 1);
      if (found === 0 && digitsOf(a, k + 2) && nearest17()) return writeDecimal(buf, pos, v < 0, cHi, cLo, k + 2);
    }
  }
  return writeString(buf, pos, String(v));
}

/** 10^x as a double, x = -330..330 (the comparisons of decimalExponent). */
const POW10_ANY = Float64Array.from({ length: 661 }, (_, i) => Number(`1e${i - 330}`));

/**
 * floor(log10(a)) for a positive double, or one less next to a power of ten (callers check their result): from its
 * binary exponent (× log10(2) ≈ 78913 / 2^18), without Math.log10, a slow call.
 */
function decimalExponent(a: number): number {
  F64[0] = a;
  const e2 = (U32[1]! >>> 20) - 1023;
  const d = (e2 * 78913) >> 18;
  return a >= POW10_ANY[d + 331]! ? d + 1 : d;
}

/** The largest k with 5^k below 2^64 (two words in FIVE). */
const MAX_K = 27;
/** 5^k as [high 32 bits, low 32 bits], k = 0..MAX_K. */
const FIVE = new Float64Array((MAX_K + 1) * 2);
for (let k = 0, p = 1n; k <= MAX_K; k++, p *= 5n) {
  FIVE[2 * k] = Number(p >> 32n);
  FIVE[2 * k + 1] = Number(p & 0xffffffffn);
}
const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
/** a × 10^k, exactly: 128 bits as 32-bit words, least significant first (one spare zero word above). */
const WIDE = new Uint32Array(5);
/** Where the integer part of a × 10^k starts in WIDE (bits below are its fraction). */
let shift = 0;
/** The candidate digits (an integer below 10^17) as cHi × 10^8 + cLo. */
let cHi = 0;
let cLo = 0;
const back = new DecimalScan();

/** Bits [at, at + 32) of WIDE. */
function bits32(at: number): number {
  const q = at >>> 5;
  const r = at & 31;
  return r === 0 ? WIDE[q]! : ((WIDE[q]! >>> r) | (WIDE[q + 1]! << (32 - r))) >>> 0;
}

/**
 * Computes a × 10^k exactly into WIDE, and floor(a × 10^k) into cHi:cLo. False where that is not possible here: a
 * subnormal, or an integer part of 2^57 or more, or one with no bits of fraction left to compare.
 */
function digitsOf(a: number, k: number): boolean {
  F64[0] = a;
  const hi = U32[1]!;
  const exp = hi >>> 20;
  if (exp === 0) return false;
  // a = m × 2^e, m = (mHi:mLo) of 53 bits; a × 10^k = m × 5^k × 2^(k+e).
  const e = exp - 1075;
  shift = -(k + e);
  if (shift < 1 || shift > 95) return false;
  mul64((hi & 0xfffff) | 0x100000, U32[0]!, FIVE[2 * k]!, FIVE[2 * k + 1]!);
  WIDE[0] = prod[3]!;
  WIDE[1] = prod[2]!;
  WIDE[2] = prod[1]!;
  WIDE[3] = prod[0]!;
  const iHi = bits32(shift + 32);
  if (iHi >= 1 << 25 || (shift + 64 < 128 && bits32(shift + 64) !== 0)) return false;
  const iLo = bits32(shift);
  // iHi × 2^32 + iLo split at 10^8: 2^32 = 42 × 10^8 + 94967296, and iHi × 94967296 + iLo < 2^53.
  const s = iHi * 94967296 + iLo;
  let q = Math.floor(s / 1e8);
  let r = s - q * 1e8;
  if (r < 0) {
    q--;
    r += 1e8;
  } else if (r >= 1e8) {
    q++;
    r -= 1e8;
  }
  cHi = iHi * 42 + q;
  cLo = r;
  return true;
}

/** -1, 0 or 1: the fraction of a × 10^k (from digitsOf) is below, at or above one half. */
function fractionVsHalf(): number {
  const h = shift - 1;
  if (((WIDE[h >>> 5]! >>> (h & 31)) & 1) === 0) return -1;
  if ((WIDE[h >>> 5]! & ((1 << (h & 31)) - 1)) !== 0) return 1;
  for (let w = (h >>> 5) - 1; w >= 0; w--) if (WIDE[w] !== 0) return 1;
  return 0;
}

/** cHi:cLo plus one. */
function increment(): void {
  if (++cLo === 1e8) {
    cLo = 0;
    cHi++;
  }
}

/**
 * Whether a 16-digit decimal (10^15 <= floor(a × 10^k) < 10^16) reads back as a: the nearer of its two neighbours
 * first (String() picks the nearest), then the other. 1: one does (left in cHi:cLo); 0: neither; -1: not known here
 * (a × 10^k out of range, or exactly halfway between them).
 */
function nearestReadsBack(a: number, k: number): number {
  if (cHi < 1e7 || cHi >= 1e8) return -1;
  const side = fractionVsHalf();
  if (side === 0) return -1;
  const floorHi = cHi;
  const floorLo = cLo;
  if (side > 0) increment();
  if (readsBack(a, k)) return 1;
  cHi = floorHi;
  cLo = floorLo;
  if (side < 0) increment();
  return readsBack(a, k) ? 1 : 0;
}

/** Whether cHi:cLo × 10^-k, a 16-digit decimal without trailing zero, reads back as a. */
function readsBack(a: number, k: number): boolean {
  if (cHi >= 1e8 || cLo % 10 === 0) return false;
  const tail = cLo % 10;
  return decimalToDouble(cHi * 1e7 + (cLo - tail) / 10, 1, tail, -k, false, back) && back.value === a;
}

/** The 17-digit decimal nearest a × 10^k (from digitsOf), left in cHi:cLo; false on a tie or one with fewer digits. */
function nearest17(): boolean {
  if (cHi < 1e8 || cHi >= 1e9) return false;
  const side = fractionVsHalf();
  if (side === 0) return false;
  if (side > 0) increment();
  return cHi < 1e9 && cLo % 10 !== 0;
}

/** Writes ±(hi × 10^8 + lo) × 10^-k (hi < 10^9, lo < 10^8, not both 0) as Number#toString writes it. */
function writeDecimal(buf: Uint8Array, pos: number, neg: boolean, hiIn: number, loIn: number, kIn: number): number {
  // Two int32 halves, so every digit step below is integer arithmetic (a double's % is a slow call).
  let hi = hiIn | 0;
  let lo = loIn | 0;
  let k = kIn;
  // Trailing zeros are no part of the shortest digits: eight at a time (a rounded value's m = 6640900 × 10^8), then
  // four, then one.
  if (lo === 0) {
    lo = hi;
    hi = 0;
    k -= 8;
  }
  if (hi === 0) {
    for (let q = (lo / 10000) | 0; lo === q * 10000; q = (lo / 10000) | 0) {
      lo = q;
      k -= 4;
    }
  }
  for (let q = (lo / 10) | 0; lo === q * 10; q = (lo / 10) | 0) {
    const h = (hi / 10) | 0;
    lo = (hi - h * 10) * 10000000 + q;
    hi = h;
    k--;
  }
  const n = hi !== 0 ? 8 + digitCount(hi) : digitCount(lo);
  if (neg) buf[pos++] = 0x2d;
  // point: where the decimal point goes, counted from the first digit (the spec's n in Number::toString).
  const point = n - k;
  if (point > 21 || point <= -6) return writeExponent(buf, pos, hi, lo, n, point);
  // The digits are written last to first, where they go: `ddd000`, `dd.ddd` or `0.00ddd`.
  let first = pos;
  let dot = -1;
  let end: number;
  if (point >= n) end = pos + point;
  else if (point > 0) {
    dot = pos + point;
    end = pos + n + 1;
  } else {
    buf[pos] = 0x30;
    buf[pos + 1] = 0x2e;
    for (let i = 0; i < -point; i++) buf[pos + 2 + i] = 0x30;
    first = pos + 2 - point;
    end = first + n;
  }
  for (let i = first + n; i < end; i++) buf[i] = 0x30;
  let p = (point >= n ? first + n : end) - 1;
  for (let i = 0; i < 8 && p >= first; i++) {
    if (p === dot) buf[p--] = 0x2e;
    const q = (lo / 10) | 0;
    buf[p--] = 0x30 + lo - q * 10;
    lo = q;
  }
  while (p >= first) {
    if (p === dot) buf[p--] = 0x2e;
    const q = (hi / 10) | 0;
    buf[p--] = 0x30 + hi - q * 10;
    hi = q;
  }
  return end;
}

/** Decimal digits of 0 < x < 10^9. */
function digitCount(x: number): number {
  let n = 1;
  while (n < 9 && x >= POW10[n]!) n++;
  return n;
}

/** `d.ddde±x` (an exponent form: below 1e-6, or 1e21 and up). */
function writeExponent(buf: Uint8Array, pos: number, hi: number, lo: number, n: number, point: number): number {
  const digits = hi !== 0 ? `${hi}${String(lo).padStart(8, '0')}` : String(lo);
  buf[pos++] = digits.charCodeAt(0);
  if (n > 1) {
    buf[pos++] = 0x2e;
    pos = writeString(buf, pos, digits.slice(1));
  }
  buf[pos++] = 0x65;
  const e = point - 1;
  buf[pos++] = e < 0 ? 0x2d : 0x2b;
  return writeString(buf, pos, String(Math.abs(e)));
}

/** An ASCII string's bytes at buf[pos]. */
function writeString(buf: Uint8Array, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
  return pos;
}
