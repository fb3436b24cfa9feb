/**
 * Writes a finite number as the bytes of `String(v)` (JSON.stringify's text for it) straight into a buffer: the hot
 * path of `medrl metrics --json`, which prints tens of millions of values. A double whose shortest decimal has at most
 * 15 significant digits (integers, and the rounded values most metrics are) is formatted here; any other goes through
 * String(v).
 *
 * Why 15 digits is safe: two different decimals of at most 15 significant digits are at least 1e-15 apart relative to
 * their size, while all decimals that round to one double lie within 2.3e-16 of it; so at most one such decimal rounds
 * to a given double, and when one does it is the shortest that does, the digits String() prints.
 */

/** Exact powers of ten as doubles (10^22 is the largest one that is exact). */
const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const DIGITS = new Uint8Array(15);

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
  if (a < 1e15 && Number.isInteger(a)) return writeDecimal(buf, pos, v < 0, a, 0);
  // k: the decimal places that give a 15-digit integer m, estimated, then m = a × 10^k checked exactly (below).
  let k = 14 - Math.floor(Math.log10(a));
  if (k >= 0 && k <= 22) {
    let m = Math.round(a * POW10[k]!);
    if (m >= 1e15 && k > 0) m = Math.round(a * POW10[--k]!);
    // a × 10^k is off from the exact product by < 0.06, and a 15-digit decimal rounding to a is < 0.12 from it, so
    // Math.round finds that decimal when there is one; the division (exact operands, correctly rounded) checks it.
    if (m < 1e15 && m / POW10[k]! === a) return writeDecimal(buf, pos, v < 0, m, k);
  }
  return writeString(buf, pos, String(v));
}

/** Writes ±m × 10^-k (m a positive integer below 10^15) as Number#toString writes it. */
function writeDecimal(buf: Uint8Array, pos: number, neg: boolean, m: number, k: number): number {
  // m as two int32 halves (m = hi × 10^8 + lo), so every digit step below is integer arithmetic (a double's % is a
  // slow call).
  let hi = Math.floor(m / 1e8) | 0;
  let lo = (m - hi * 1e8) | 0;
  // Trailing zeros are no part of the shortest digits.
  for (let q = (lo / 10) | 0; lo === q * 10; q = (lo / 10) | 0) {
    const h = (hi / 10) | 0;
    lo = (hi - h * 10) * 10000000 + q;
    hi = h;
    k--;
  }
  // Digits, least significant first, into DIGITS from its end: lo's 8 (leading zeros included while hi has more).
  let end = DIGITS.length;
  for (let i = 0; i < 8 && (hi !== 0 || lo !== 0); i++) {
    const q = (lo / 10) | 0;
    DIGITS[--end] = 0x30 + lo - q * 10;
    lo = q;
  }
  while (hi !== 0) {
    const q = (hi / 10) | 0;
    DIGITS[--end] = 0x30 + hi - q * 10;
    hi = q;
  }
  const n = DIGITS.length - end;
  if (neg) buf[pos++] = 0x2d;
  // point: where the decimal point goes, counted from the first digit (the spec's n in Number::toString).
  const point = n - k;
  if (point >= n && point <= 21) {
    for (let i = 0; i < n; i++) buf[pos++] = DIGITS[end + i]!;
    for (let i = n; i < point; i++) buf[pos++] = 0x30;
  } else if (point > 0 && point <= 21) {
    for (let i = 0; i < point; i++) buf[pos++] = DIGITS[end + i]!;
    buf[pos++] = 0x2e;
    for (let i = point; i < n; i++) buf[pos++] = DIGITS[end + i]!;
  } else if (point > -6 && point <= 0) {
    buf[pos++] = 0x30;
    buf[pos++] = 0x2e;
    for (let i = point; i < 0; i++) buf[pos++] = 0x30;
    for (let i = 0; i < n; i++) buf[pos++] = DIGITS[end + i]!;
  } else {
    buf[pos++] = DIGITS[end]!;
    if (n > 1) {
      buf[pos++] = 0x2e;
      for (let i = 1; i < n; i++) buf[pos++] = DIGITS[end + i]!;
    }
    buf[pos++] = 0x65;
    const e = point - 1;
    buf[pos++] = e < 0 ? 0x2d : 0x2b;
    pos = writeString(buf, pos, String(Math.abs(e)));
  }
  return pos;
}

/** An ASCII string's bytes at buf[pos]. */
function writeString(buf: Uint8Array, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
  return pos;
}
