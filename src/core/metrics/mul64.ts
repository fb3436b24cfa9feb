/** The last 64×64-bit product: four 32-bit words, most significant first (a typed array: no allocation per product). */
export const prod = new Float64Array(4);
const INV_2_16 = 2 ** -16;

/**
 * (aHi:aLo) × (bHi:bLo), 64-bit each, into prod, schoolbook on 16-bit pieces: each partial product is below 2^32 and
 * each column sum below 2^35, all exact in doubles (`& 0xffff` keeps the low 16 bits of any such integer; no `%`, which
 * is a slow floating-point call). Shared by the decimal parser (decimal-bytes) and the number formatter (number-bytes).
 */
export function mul64(aHi: number, aLo: number, bHi: number, bLo: number): void {
  const a3 = aHi >>> 16,
    a2 = aHi & 0xffff,
    a1 = aLo >>> 16,
    a0 = aLo & 0xffff;
  const b3 = bHi >>> 16,
    b2 = bHi & 0xffff,
    b1 = bLo >>> 16,
    b0 = bLo & 0xffff;
  let s = a0 * b0;
  const r0 = s & 0xffff;
  s = (s - r0) * INV_2_16 + a0 * b1 + a1 * b0;
  const r1 = s & 0xffff;
  s = (s - r1) * INV_2_16 + a0 * b2 + a1 * b1 + a2 * b0;
  const r2 = s & 0xffff;
  s = (s - r2) * INV_2_16 + a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0;
  const r3 = s & 0xffff;
  s = (s - r3) * INV_2_16 + a1 * b3 + a2 * b2 + a3 * b1;
  const r4 = s & 0xffff;
  s = (s - r4) * INV_2_16 + a2 * b3 + a3 * b2;
  const r5 = s & 0xffff;
  s = (s - r5) * INV_2_16 + a3 * b3;
  prod[0] = s;
  prod[1] = r5 * 65536 + r4;
  prod[2] = r3 * 65536 + r2;
  prod[3] = r1 * 65536 + r0;
}
