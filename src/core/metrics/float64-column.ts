const BLOCK = 8192;

/**
 * "Not logged" is a NaN with its own payload, written and compared through a Uint32 view of the same memory, so that a
 * logged NaN (a diverging loss: a value the user must see) stays apart from a missing value. Words are little-endian
 * (every platform Node runs on here): [low, high].
 */
const MISSING_LO = 0x4d495353;
const MISSING_HI = 0x7ffc0000;
const QNAN_HI = 0x7ff80000;
/** A block of "not logged", copied into each new block (filling it word by word took 15% of a dense log's parse). */
const EMPTY_BLOCK = new Uint32Array(BLOCK * 2);
for (let j = 0; j < EMPTY_BLOCK.length; j += 2) {
  EMPTY_BLOCK[j] = MISSING_LO;
  EMPTY_BLOCK[j + 1] = MISSING_HI;
}

/**
 * A growable column of doubles in fixed 64 KB Float64Array blocks: exactly 8 bytes a value, outside the JS heap, and
 * growing never copies what is there (a plain array's growth copies and over-allocates by half). Rows not logged read
 * as NaN from `get` and false from `has`; a logged NaN reads as NaN with `has` true.
 */
export class Float64Column {
  private readonly blocks: Float64Array[] = [];
  private readonly words: Uint32Array[] = [];
  length = 0;
  /** The first row changed since `takeChangedFrom` (rows added at the end do not count): what a pyramid must redo. */
  private changedFrom = Infinity;

  get(i: number): number {
    return i < this.length ? this.blocks[i >>> 13]![i & (BLOCK - 1)]! : NaN;
  }

  /** Whether row i was logged (NaN and infinities included). */
  has(i: number): boolean {
    if (i >= this.length) return false;
    const w = this.words[i >>> 13]!;
    const j = (i & (BLOCK - 1)) * 2;
    return w[j] !== MISSING_LO || w[j + 1] !== MISSING_HI;
  }

  /** The logged value at row i, or undefined when the row was not logged. */
  value(i: number): number | undefined {
    return this.has(i) ? this.get(i) : undefined;
  }

  /** Sets row i (NaN is a logged NaN), filling any rows before it with "not logged". */
  set(i: number, v: number): void {
    if (i < this.length && i < this.changedFrom) this.changedFrom = i;
    this.grow(i);
    if (Number.isNaN(v)) this.setWords(i, 0, QNAN_HI);
    else this.blocks[i >>> 13]![i & (BLOCK - 1)] = v;
    if (i >= this.length) this.length = i + 1;
  }

  /** Inserts a "not logged" row at i (a step logged out of order: rare, so shifting is fine). */
  insertMissing(i: number): void {
    if (i >= this.length) return;
    if (i < this.changedFrom) this.changedFrom = i;
    this.grow(this.length);
    for (let k = this.length; k > i; k--) {
      const from = this.words[(k - 1) >>> 13]!;
      const j = ((k - 1) & (BLOCK - 1)) * 2;
      this.setWords(k, from[j]!, from[j + 1]!);
    }
    this.setWords(i, MISSING_LO, MISSING_HI);
    this.length++;
  }

  /** The first row changed since the last call (Infinity if none), and starts counting again. */
  takeChangedFrom(): number {
    const from = this.changedFrom;
    this.changedFrom = Infinity;
    return from;
  }

  private grow(i: number): void {
    while (this.blocks.length * BLOCK <= i) {
      const words = new Uint32Array(BLOCK * 2);
      words.set(EMPTY_BLOCK);
      this.words.push(words);
      this.blocks.push(new Float64Array(words.buffer));
    }
  }

  private setWords(i: number, lo: number, hi: number): void {
    const w = this.words[i >>> 13]!;
    const j = (i & (BLOCK - 1)) * 2;
    w[j] = lo;
    w[j + 1] = hi;
  }
}
