// AssemblyScript (see scan-parts.ts): what the line scanner (scan-parts.ts) and the JSON line writer (json-lines.ts)
// share: 64-bit products and decimal-bytes.ts's correctly rounded decimal to double.

/** Decimal exponents the power-of-five table covers (decimal-bytes.ts's MIN_Q..MAX_Q). */
export const MIN_Q: i32 = -100;
export const MAX_Q: i32 = 100;
/** Bytes of the power-of-five table. */
export const POW5_BYTES: i32 = (MAX_Q - MIN_Q + 1) * 16;

export const POW10 = memory.data<f64>([
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]);

/** 5^q as 128 bits, as decimal-bytes.ts's POW5: written by the JavaScript side (two u64 per q, high first). */
let POW5: usize = 0;

/** Where the table is (laid out by the module's init). */
export function setPow5(at: usize): void {
  POW5 = at;
}

/** Where the JavaScript side writes the table (decimal-bytes.ts's writePow5Table). */
export function pow5Table(): usize {
  return POW5;
}

/** The high 64 bits of a × b. */
export function mulHigh(a: u64, b: u64): u64 {
  const aLo = a & 0xffffffff;
  const aHi = a >> 32;
  const bLo = b & 0xffffffff;
  const bHi = b >> 32;
  const lh = aLo * bHi;
  const hl = aHi * bLo;
  const mid = ((aLo * bLo) >> 32) + (lh & 0xffffffff) + (hl & 0xffffffff);
  return aHi * bHi + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/**
 * w × 10^q correctly rounded (1 <= w < 10^19, MIN_Q <= q <= MAX_Q): decimal-bytes.ts's eiselLemire step for step, with
 * native 64-bit products. NaN where it returns false.
 */
export function eiselLemire(w: u64, q: i32): f64 {
  const lz = <i32>clz(w);
  w <<= <u64>lz;
  const t = POW5 + ((<usize>(q - MIN_Q)) << 4);
  const tHi = load<u64>(t);
  let hi = mulHigh(w, tHi);
  let lo = w * tHi;
  // The 9 bits below the 55 kept are all ones: add w × the table entry's low 64 bits.
  if ((hi & 0x1ff) == 0x1ff) {
    const add = mulHigh(w, load<u64>(t, 8));
    const sum = lo + add;
    if (sum < lo) hi++;
    lo = sum;
  }
  const upper = <i32>(hi >> 63);
  const shift = upper + 9;
  const below = hi & (((<u64>1) << (<u64>shift)) - 1);
  const last2 = (hi >> (<u64>shift)) & 3;
  let power2 = ((217706 * q) >> 16) + 63 + upper - lz + 1023;
  if (power2 <= 0) return NaN;
  let roundUp: u64 = last2 & 1;
  if (lo <= 1 && q >= -4 && q <= 23 && last2 == 1 && below == 0) roundUp = 0;
  let mantissa = (hi >> (<u64>(shift + 1))) + roundUp;
  if (mantissa >= (<u64>1) << 53) {
    mantissa >>= 1;
    power2++;
  }
  if (power2 >= 0x7ff) return NaN;
  return reinterpret<f64>((mantissa & (((<u64>1) << 52) - 1)) | ((<u64>power2) << 52));
}

/** m × 10^scale correctly rounded, as Number() reads those digits (m >= 1); NaN where neither fast path applies. */
export function decimalToDouble(m: u64, scale: i32): f64 {
  // Clinger: m exact in a double and 10^|scale| exact, so one correctly rounded operation gives the answer.
  if (m < (<u64>1) << 53 && scale >= -22 && scale <= 22) {
    const x = <f64>m;
    return scale < 0 ? x / load<f64>(POW10 + ((<usize>-scale) << 3)) : x * load<f64>(POW10 + ((<usize>scale) << 3));
  }
  return scale >= MIN_Q && scale <= MAX_Q ? eiselLemire(m, scale) : NaN;
}
