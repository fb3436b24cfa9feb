// AssemblyScript, compiled to WebAssembly by scripts/build-wasm.mjs into ../json-lines-wasm.ts (see scan-parts.ts).
//
// The hot loop of `medrl metrics --json` (series-json.ts's JsonLineFormat.write): rows of a tile of values written as
// `{"step":N,"metrics":{"key":value,...}}` lines, each number as the bytes of String(v) (number-bytes.ts's writeNumber,
// step for step, with native 64-bit integers where that file works on 16- and 32-bit pieces of doubles). A value that
// path leaves to String() (a subnormal, a tie, a value far from 1) stops the call at its row, which the JavaScript side
// writes; so the output is JsonLineFormat's byte for byte.
import { decimalToDouble, mulHigh, POW10, POW5_BYTES, setPow5 } from './decimal';
export { pow5Table } from './decimal';

/** A row that was not logged: a NaN with its own payload (float64-column.ts's MISSING_HI:MISSING_LO). */
const MISSING: u64 = 0x7ffc00004d495353;
/** The largest k with 5^k below 2^64. */
const MAX_K: i32 = 27;
/** 10^x for x = -9..-1, as Number('1e-9')... reads them (decimalExponent's comparisons below 1). */
const POW10_NEG = memory.data<f64>([1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]);
const STEP = memory.data<u8>([0x7b, 0x22, 0x73, 0x74, 0x65, 0x70, 0x22, 0x3a]); // {"step":
const METRICS = memory.data<u8>([0x2c, 0x22, 0x6d, 0x65, 0x74, 0x72, 0x69, 0x63, 0x73, 0x22, 0x3a, 0x7b]); // ,"metrics":{
const NAN = memory.data<u8>([0x22, 0x4e, 0x61, 0x4e, 0x22]); // "NaN"
const INF = memory.data<u8>([0x22, 0x49, 0x6e, 0x66, 0x69, 0x6e, 0x69, 0x74, 0x79, 0x22]); // "Infinity"
const NINF = memory.data<u8>([0x22, 0x2d, 0x49, 0x6e, 0x66, 0x69, 0x6e, 0x69, 0x74, 0x79, 0x22]); // "-Infinity"

// Laid out past the static data by init(), sized by the JavaScript side.
let FIVE: usize = 0;
/** Per column: where its `,"key":` bytes start in KEYS, and how many there are. */
let KEY_AT: usize = 0;
let KEY_LEN: usize = 0;
let KEYS: usize = 0;
let STEPS: usize = 0;
let VALUES: usize = 0;
let OUT: usize = 0;
let outEnd: usize = 0;

/**
 * Lays out the areas for `columns` keys of `keyBytes` bytes in all, `rows` rows a call and `outBytes` of output, and
 * grows the memory to hold them: call once, before anything else (views made before go stale).
 */
export function init(columns: i32, keyBytes: i32, rows: i32, outBytes: i32): void {
  let at = (__heap_base + 15) & ~15;
  setPow5(at);
  at += POW5_BYTES;
  FIVE = at;
  at += (MAX_K + 1) * 8;
  KEY_AT = at;
  at += columns * 4;
  KEY_LEN = at;
  at += columns * 4;
  KEYS = at;
  at += (keyBytes + 15) & ~15;
  STEPS = at;
  at += rows * 8;
  VALUES = at;
  at += <usize>rows * <usize>columns * 8;
  OUT = at;
  at += outBytes + 64;
  const pages = <i32>((at + 0xffff) >> 16);
  if (pages > memory.size()) memory.grow(pages - memory.size());
  let p: u64 = 1;
  for (let k = 0; k <= MAX_K; k++, p *= 5) store<u64>(FIVE + ((<usize>k) << 3), p);
}

export function keyAt(): usize {
  return KEY_AT;
}
export function keyLengths(): usize {
  return KEY_LEN;
}
export function keys(): usize {
  return KEYS;
}
export function steps(): usize {
  return STEPS;
}
export function values(): usize {
  return VALUES;
}
export function out(): usize {
  return OUT;
}
export function outLength(): i32 {
  return <i32>(outEnd - OUT);
}

function copy(from: usize, n: usize, to: usize): usize {
  memory.copy(to, from, n);
  return to + n;
}

/**
 * Writes rows [first, n) of the values (column c's row r at c × stride + r) and steps at OUT, up to the first row with
 * a value this module leaves to String(); returns that row (n when all were written), and outLength() the bytes.
 */
export function writeRows(columns: i32, first: i32, n: i32, stride: i32): i32 {
  let pos = OUT;
  for (let r = first; r < n; r++) {
    const rowStart = pos;
    pos = copy(STEP, 8, pos);
    pos = writeNumber(pos, load<f64>(STEPS + ((<usize>r) << 3)));
    if (pos == 0) {
      outEnd = rowStart;
      return r;
    }
    pos = copy(METRICS, 12, pos);
    let bare: usize = 1;
    for (let c = 0; c < columns; c++) {
      const at = VALUES + ((<usize>c * <usize>stride + <usize>r) << 3);
      const v = load<f64>(at);
      if (v != v && load<u64>(at) == MISSING) continue;
      pos = copy(KEYS + <usize>load<i32>(KEY_AT + ((<usize>c) << 2)) + bare, <usize>load<i32>(KEY_LEN + ((<usize>c) << 2)) - bare, pos);
      bare = 0;
      if (v - v == 0) {
        pos = writeNumber(pos, v);
        if (pos == 0) {
          outEnd = rowStart;
          return r;
        }
      } else if (v != v) pos = copy(NAN, 5, pos);
      else if (v > 0) pos = copy(INF, 10, pos);
      else pos = copy(NINF, 11, pos);
    }
    store<u8>(pos, 0x7d);
    store<u8>(pos + 1, 0x7d);
    store<u8>(pos + 2, 0x0a);
    pos += 3;
  }
  outEnd = pos;
  return n;
}

/** Math.round for a >= 0 (x - floor(x) is exact below 2^52, and 0 above, where every double is an integer). */
function round(x: f64): f64 {
  const r = Math.floor(x);
  return x - r >= 0.5 ? r + 1 : r;
}

function pow10(k: i32): f64 {
  return load<f64>(POW10 + ((<usize>k) << 3));
}

/**
 * Writes finite `v` as String(v) writes it at pos and returns the position past it, or 0 where it leaves v to String()
 * (number-bytes.ts's writeNumber).
 */
function writeNumber(pos: usize, v: f64): usize {
  if (v == 0) {
    store<u8>(pos, 0x30);
    return pos + 1;
  }
  const neg = v < 0;
  const a = Math.abs(v);
  if (a < 1e15 && Math.floor(a) == a) return writeDecimal(pos, neg, <u64>a, 0);
  const e = decimalExponent(a);
  if (e < -8 || e > 14) return 0;
  // k: the decimal places that give a 15-digit integer m, then m = a × 10^k checked exactly (see number-bytes.ts).
  let k = 14 - e;
  let m = round(a * pow10(k));
  if (m >= 1e15 && k > 0) m = round(a * pow10(--k));
  if (m < 1e15 && m / pow10(k) == a) return writeDecimal(pos, neg, <u64>m, k);
  // No 15-digit decimal reads back as a: 16 or 17 digits, k + 1 or k + 2 decimal places.
  if (k + 2 <= MAX_K && digitsOf(a, k + 1)) {
    const found = nearestReadsBack(a, k + 1);
    if (found > 0) return writeDecimal(pos, neg, cand, k + 1);
    if (found == 0 && digitsOf(a, k + 2) && nearest17()) return writeDecimal(pos, neg, cand, k + 2);
  }
  return 0;
}

/**
 * floor(log10(a)) for a positive double (or one less next to a power of ten: writeNumber checks its result), from its
 * binary exponent; outside -9..14 only roughly (writeNumber leaves those values to String()).
 */
function decimalExponent(a: f64): i32 {
  const e2 = <i32>(reinterpret<u64>(a) >> 52) - 1023;
  const d = (e2 * 78913) >> 18;
  if (d < -9 || d > 14) return d;
  const next = d + 1 >= 0 ? pow10(d + 1) : load<f64>(POW10_NEG + ((<usize>(d + 10)) << 3));
  return a >= next ? d + 1 : d;
}

/** a × 10^k (from digitsOf) as 128 bits, where its integer part starts, and the candidate digits. */
let pHi: u64 = 0;
let pLo: u64 = 0;
let shift: i32 = 0;
let cand: u64 = 0;

/**
 * Computes a × 10^k exactly and floor(a × 10^k) into cand. False where that is not possible here: a subnormal, an
 * integer part of 2^57 or more, or one with no bits of fraction left to compare (number-bytes.ts's digitsOf).
 */
function digitsOf(a: f64, k: i32): bool {
  const bits = reinterpret<u64>(a);
  const exp = <i32>(bits >> 52);
  if (exp == 0) return false;
  // a = m × 2^e; a × 10^k = m × 5^k × 2^(k+e).
  const m = (bits & 0xfffffffffffff) | 0x10000000000000;
  shift = -(k + exp - 1075);
  if (shift < 1 || shift > 95) return false;
  const f = load<u64>(FIVE + ((<usize>k) << 3));
  pLo = m * f;
  pHi = mulHigh(m, f);
  let whole: u64;
  if (shift < 64) {
    if (pHi >> (<u64>shift) != 0) return false;
    const up = <u64>(64 - shift);
    whole = (pLo >> (<u64>shift)) | (pHi << up);
  } else whole = pHi >> (<u64>(shift - 64));
  if (whole >= (<u64>1) << 57) return false;
  cand = whole;
  return true;
}

/** -1, 0 or 1: the fraction of a × 10^k (from digitsOf) is below, at or above one half. */
function fractionVsHalf(): i32 {
  const h = shift - 1;
  // The half's bit, and the bits below it, in the word that holds it.
  const word = h < 64 ? pLo : pHi;
  const at = <u64>(h & 63);
  if (((word >> at) & 1) == 0) return -1;
  const one: u64 = 1;
  const below = word & ((one << at) - 1);
  return below != 0 || (h >= 64 && pLo != 0) ? 1 : 0;
}

/**
 * Whether a 16-digit decimal (10^15 <= floor(a × 10^k) < 10^16) reads back as a: the nearer of its two neighbours
 * first (String() picks the nearest), then the other. 1: one does (left in cand); 0: neither; -1: not known here.
 */
function nearestReadsBack(a: f64, k: i32): i32 {
  if (cand < 1000000000000000 || cand >= 10000000000000000) return -1;
  const side = fractionVsHalf();
  if (side == 0) return -1;
  const floor = cand;
  if (side > 0) cand++;
  if (readsBack(a, k)) return 1;
  cand = floor;
  if (side < 0) cand++;
  return readsBack(a, k) ? 1 : 0;
}

/** Whether cand × 10^-k, a 16-digit decimal without trailing zero, reads back as a. */
function readsBack(a: f64, k: i32): bool {
  if (cand >= 10000000000000000 || cand % 10 == 0) return false;
  return decimalToDouble(cand, -k) == a;
}

/** The 17-digit decimal nearest a × 10^k (from digitsOf), left in cand; false on a tie or one with fewer digits. */
function nearest17(): bool {
  if (cand < 10000000000000000 || cand >= 100000000000000000) return false;
  const side = fractionVsHalf();
  if (side == 0) return false;
  if (side > 0) cand++;
  return cand < 100000000000000000 && cand % 10 != 0;
}

/** Decimal digits of 0 < x < 10^17. */
function digitCount(x: u64): i32 {
  let n = 1;
  let p: u64 = 10;
  while (n < 17 && x >= p) {
    n++;
    p *= 10;
  }
  return n;
}

/** Writes ±digits × 10^-k (0 < digits < 10^17) as Number#toString writes it. */
function writeDecimal(pos: usize, neg: bool, digitsIn: u64, kIn: i32): usize {
  let digits = digitsIn;
  let k = kIn;
  // Trailing zeros are no part of the shortest digits.
  while (digits % 10 == 0) {
    digits /= 10;
    k--;
  }
  const n = digitCount(digits);
  if (neg) store<u8>(pos++, 0x2d);
  // point: where the decimal point goes, counted from the first digit (the spec's n in Number::toString).
  const point = n - k;
  if (point > 21 || point <= -6) return writeExponent(pos, digits, n, point);
  if (point >= n) {
    writeDigits(pos, digits, n);
    pos += <usize>n;
    for (let i = n; i < point; i++) store<u8>(pos++, 0x30);
    return pos;
  }
  if (point > 0) {
    // `dd.ddd`: the digits after the point, then those before it.
    const after = n - point;
    let d = digits;
    for (let i = 0; i < after; i++) {
      store<u8>(pos + <usize>point + <usize>after - <usize>i, <u8>(0x30 + (d % 10)));
      d /= 10;
    }
    store<u8>(pos + <usize>point, 0x2e);
    writeDigits(pos, d, point);
    return pos + <usize>n + 1;
  }
  store<u8>(pos, 0x30);
  store<u8>(pos + 1, 0x2e);
  pos += 2;
  for (let i = 0; i < -point; i++) store<u8>(pos++, 0x30);
  writeDigits(pos, digits, n);
  return pos + <usize>n;
}

/** The n digits of x at pos (x < 10^n). */
function writeDigits(pos: usize, x: u64, n: i32): void {
  for (let i = n - 1; i >= 0; i--) {
    store<u8>(pos + <usize>i, <u8>(0x30 + (x % 10)));
    x /= 10;
  }
}

/** `d.ddde±x` (an exponent form: below 1e-6, or 1e21 and up). */
function writeExponent(pos: usize, digits: u64, n: i32, point: i32): usize {
  let d = digits;
  for (let i = n - 1; i >= 1; i--) {
    store<u8>(pos + 1 + <usize>i, <u8>(0x30 + (d % 10)));
    d /= 10;
  }
  store<u8>(pos, <u8>(0x30 + d));
  if (n > 1) {
    store<u8>(pos + 1, 0x2e);
    pos += <usize>n + 1;
  } else pos += 1;
  store<u8>(pos++, 0x65);
  const e = point - 1;
  store<u8>(pos++, e < 0 ? 0x2d : 0x2b);
  const ae = e < 0 ? -e : e;
  const ne = ae >= 100 ? 3 : ae >= 10 ? 2 : 1;
  writeDigits(pos, <u64>ae, ne);
  return pos + <usize>ne;
}
