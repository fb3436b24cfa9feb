const BLOCK = 8192;

/**
 * A growable column of doubles in fixed 64 KB Float64Array blocks: exactly 8 bytes a value, outside the JS heap, and
 * growing never copies what is there (a plain array's growth copies and over-allocates by half). NaN marks "no value".
 */
export class Float64Column {
  private readonly blocks: Float64Array[] = [];
  length = 0;

  get(i: number): number {
    return i < this.length ? this.blocks[i >>> 13]![i & (BLOCK - 1)]! : NaN;
  }

  /** Sets row i, filling any rows before it with NaN. */
  set(i: number, v: number): void {
    while (this.blocks.length * BLOCK <= i) this.blocks.push(new Float64Array(BLOCK).fill(NaN));
    this.blocks[i >>> 13]![i & (BLOCK - 1)] = v;
    if (i >= this.length) this.length = i + 1;
  }

  /** Inserts a NaN row at i (a step logged out of order: rare, so shifting is fine). */
  insertNaN(i: number): void {
    if (i >= this.length) return;
    for (let k = this.length; k > i; k--) this.set(k, this.get(k - 1));
    this.set(i, NaN);
  }
}
