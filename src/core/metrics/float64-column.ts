import { BLOCK_ROWS as BLOCK, processBlockSpill, type BlockSpill, type SpillOwner } from './block-spill';

/** Where a column restored from a metrics cache file reads its blocks that were never changed since (read-only). */
export interface BlockSource {
  read(k: number, into: Uint32Array): void;
}

/**
 * "Not logged" is a NaN with its own payload, written and compared through a Uint32 view of the same memory, so that a
 * logged NaN (a diverging loss: a value the user must see) stays apart from a missing value. Words are little-endian
 * (every platform Node runs on here): [low, high].
 */
const MISSING_LO = 0x4d495353;
const MISSING_HI = 0x7ffc0000;
const QNAN_HI = 0x7ff80000;
/** Whether the value at words[j], words[j + 1] is "not logged" (a row's NaN, read through a Uint32 view of its memory). */
export function notLogged(words: Uint32Array, j: number): boolean {
  return words[j] === MISSING_LO && words[j + 1] === MISSING_HI;
}

/** A block of "not logged", copied into each new block (filling it word by word took 15% of a dense log's parse). */
const EMPTY_BLOCK = new Uint32Array(BLOCK * 2);
for (let j = 0; j < EMPTY_BLOCK.length; j += 2) {
  EMPTY_BLOCK[j] = MISSING_LO;
  EMPTY_BLOCK[j + 1] = MISSING_HI;
}

/**
 * The rows a column's first block starts with. It doubles as rows are added, up to a full block: a run logging thousands
 * of metric names (verl's per-data-source metrics) a few times each must not cost a full 64 KB block per name. Later
 * blocks start full (a column that long goes on).
 */
const FIRST_ROWS = 16;

/** Where copyRows reads a block that is not resident. */
const SCRATCH_BLOCK = new Uint32Array(BLOCK * 2);

/**
 * A growable column of doubles in 64 KB Float64Array blocks: 8 bytes a value, outside the JS heap, and growing never
 * copies a full block (a plain array's growth copies and over-allocates by half). The first block starts small and
 * doubles until full; only full blocks count against the spill budget. Rows not logged read
 * as NaN from `get` and false from `has`; a logged NaN reads as NaN with `has` true.
 *
 * Blocks are resident within the budget of a BlockSpill shared by every column of the process: past it, the oldest
 * block (never a column's last, which the parser is writing) goes to the spill file and is read back when a row of it
 * is read or written. A run within the budget never spills.
 */
export class Float64Column implements SpillOwner {
  /** Null while the block is spilled. */
  private readonly blocks: Array<Float64Array | null> = [];
  private readonly words: Array<Uint32Array | null> = [];
  /** Each block's slot in the spill file (-1: never spilled) and whether it changed since it was last written there. */
  private readonly slots: number[] = [];
  private readonly dirty: boolean[] = [];
  /** Whether the store frees this column's slots when it is collected (registered on its first slot). */
  private tracked = false;
  length = 0;
  /** Rows the blocks have room for (the last block may be partial). */
  private end = 0;
  /** The first row changed since `takeChangedFrom` (rows added at the end do not count): what a pyramid must redo. */
  private changedFrom = Infinity;

  /** Blocks never changed since the column was restored from a cache file are read from there (they never spill). */
  private backing: BlockSource | undefined;

  constructor(private readonly spill: BlockSpill = processBlockSpill) {}

  /**
   * A column of `length` rows in `blocks` blocks whose words are in `source` (a metrics cache file): nothing is read
   * until a row is, and a block read back goes away again without being written when the budget needs its memory.
   */
  static restored(source: BlockSource, length: number, blocks: number, spill: BlockSpill = processBlockSpill): Float64Column {
    const col = new Float64Column(spill);
    col.backing = source;
    col.length = length;
    col.end = blocks * BLOCK;
    for (let k = 0; k < blocks; k++) {
      col.blocks.push(null);
      col.words.push(null);
      col.slots.push(-1);
      col.dirty.push(false);
    }
    return col;
  }

  /** Blocks the column has (its last one partly filled with "not logged"). */
  get blockCount(): number {
    return this.blocks.length;
  }

  /** Copies block k's words into `into`, wherever the block is, without making it resident (a cache writer's read). */
  copyBlock(k: number, into: Uint32Array): void {
    const words = this.words[k];
    if (!words) return this.readBlock(k, into);
    into.set(words);
    // A partial last block: the rows it has no room for yet are not logged.
    if (words.length < into.length) into.set(EMPTY_BLOCK.subarray(words.length, into.length), words.length);
  }

  /**
   * Copies the words of rows [from, from + count), all in one block, into `into` from its start, wherever the block is,
   * without making it resident; rows past the column's blocks are "not logged". For a reader of many columns row by
   * row (`medrl metrics --json`), which then reads plain arrays instead of a lookup per value.
   */
  copyRows(from: number, count: number, into: Uint32Array): void {
    const k = from >>> 13;
    const j = (from & (BLOCK - 1)) * 2;
    const words = k < this.words.length ? (this.words[k] ?? this.readBlockInto(k)) : EMPTY_BLOCK;
    const part = words.subarray(j, j + count * 2);
    into.set(part);
    if (part.length < count * 2) into.set(EMPTY_BLOCK.subarray(0, count * 2 - part.length), part.length);
  }

  /**
   * Hands the column's blocks over, for a column its owner is done with (a range's worker handing its parse over): the
   * resident ones as they are, the others read into new memory, so all can be transferred to another thread without a
   * copy. Rows past `length` in the last block are "not logged". The column is left empty.
   */
  takeBlocks(): Array<Uint32Array<ArrayBuffer>> {
    const out: Array<Uint32Array<ArrayBuffer>> = [];
    for (let k = 0; k < this.words.length; k++) {
      let words = this.words[k] as Uint32Array<ArrayBuffer> | null;
      if (!words) this.readBlock(k, (words = new Uint32Array(BLOCK * 2)));
      out.push(words);
      // The spill store may still have it queued: with no words here, it forgets it.
      this.words[k] = null;
      this.blocks[k] = null;
    }
    this.length = 0;
    return out;
  }

  /** Block k, not resident, read into a scratch block shared by every column (valid until the next call). */
  private readBlockInto(k: number): Uint32Array {
    this.readBlock(k, SCRATCH_BLOCK);
    return SCRATCH_BLOCK;
  }

  /** Reads block k, which is not resident, from the spill file if it was spilled, else from the cache file it came from. */
  private readBlock(k: number, into: Uint32Array): void {
    if (this.slots[k]! >= 0) this.spill.read(this.slots[k]!, into);
    else this.backing!.read(k, into);
  }

  get(i: number): number {
    if (i >= this.length) return NaN;
    const k = i >>> 13;
    return (this.blocks[k] ?? this.load(k))[i & (BLOCK - 1)]!;
  }

  /**
   * Block k's values (rows k × BLOCK_ROWS on; "not logged" reads as NaN), read back if it is not resident: for loops
   * over many rows (a chart's envelope), which then skip a lookup per row. Valid until another block is read, which may
   * take its memory.
   */
  blockValues(k: number): Float64Array {
    return this.blocks[k] ?? this.load(k);
  }

  /** Whether row i was logged (NaN and infinities included). */
  has(i: number): boolean {
    if (i >= this.length) return false;
    const k = i >>> 13;
    return !notLogged(this.words[k] ?? this.loadWords(k), (i & (BLOCK - 1)) * 2);
  }

  /** The logged value at row i, or undefined when the row was not logged. */
  value(i: number): number | undefined {
    return this.has(i) ? this.get(i) : undefined;
  }

  /** Sets row i (NaN is a logged NaN), filling any rows before it with "not logged". */
  set(i: number, v: number): void {
    // Kept small, the parsers' hot path: appends land in the last block or new ones, never spilled, so resident.
    if (i < this.length) this.beforeOverwrite(i);
    else {
      if (this.end <= i) this.grow(i);
      // A restored column's last block is read only when a row is added to it.
      else if (this.blocks[i >>> 13] === null) this.beforeOverwrite(i);
      this.length = i + 1;
    }
    if (Number.isNaN(v)) this.setWords(i, 0, QNAN_HI);
    else this.blocks[i >>> 13]![i & (BLOCK - 1)] = v;
  }

  /**
   * Sets rows row, row + 1, ... row + count - 1 to values[from], values[from + stride], ...: a batch of step lines with
   * the same keys (scan-parts.ts's readRun), one column at a time instead of a call per value.
   */
  setRows(row: number, values: Float64Array, from: number, stride: number, count: number): void {
    if (row < this.length) {
      for (let r = 0; r < count; r++) this.set(row + r, values[from + r * stride]!);
      return;
    }
    for (let done = 0, src = from; done < count;) {
      const i = row + done;
      const k = i >>> 13;
      const j = i & (BLOCK - 1);
      const n = Math.min(count - done, BLOCK - j);
      // As set() does for a row past the end: room in the last block or new ones, or a restored column's last one read back.
      if (this.end < i + n) this.grow(i + n - 1);
      else if (this.blocks[k] === null) this.beforeOverwrite(i);
      const block = this.blocks[k]!;
      for (let r = 0; r < n; r++, src += stride) {
        const v = values[src]!;
        if (Number.isNaN(v)) this.setWords(i + r, 0, QNAN_HI);
        else block[j + r] = v;
      }
      done += n;
      this.length = i + n;
    }
  }

  /**
   * Writes `count` rows from `words` (two words a row, as copyRows gives them) at rows `row` on, at or past the
   * column's end: a later range of the same log, parsed on another thread, copied a block at a time.
   */
  appendWords(row: number, words: Uint32Array, count: number): void {
    if (row < this.length) throw new Error(`appendWords: row ${row} is before the column's end (${this.length})`);
    for (let done = 0; done < count;) {
      const i = row + done;
      const k = i >>> 13;
      const j = i & (BLOCK - 1);
      const n = Math.min(count - done, BLOCK - j);
      // A new block is the last one, which is never spilled; an existing one at or past the end is the last one too.
      if (this.end < i + n) this.grow(i + n - 1);
      else if (this.blocks[k] === null) this.load(k);
      this.dirty[k] = true;
      this.words[k]!.set(words.subarray(done * 2, (done + n) * 2), j * 2);
      done += n;
    }
    if (count > 0) this.length = row + count;
  }

  /** Inserts a "not logged" row at i (a step logged out of order: rare, so shifting is fine). */
  insertMissing(i: number): void {
    if (i >= this.length) return;
    if (i < this.changedFrom) this.changedFrom = i;
    if (this.end <= this.length) this.grow(this.length);
    for (let k = this.length; k > i; k--) {
      const from = this.words[(k - 1) >>> 13] ?? this.loadWords((k - 1) >>> 13);
      const j = ((k - 1) & (BLOCK - 1)) * 2;
      const lo = from[j]!;
      const hi = from[j + 1]!;
      // Reading row k's block back may spill row k-1's: both words are read first.
      this.beforeOverwrite(k);
      this.setWords(k, lo, hi);
    }
    this.beforeOverwrite(i);
    this.setWords(i, MISSING_LO, MISSING_HI);
    this.length++;
  }

  /** The first row changed since the last call (Infinity if none), and starts counting again. */
  takeChangedFrom(): number {
    const from = this.changedFrom;
    this.changedFrom = Infinity;
    return from;
  }

  /** Called by the spill store: writes block k out if it changed, and gives its memory back (never the last block). */
  spillBlock(k: number): Uint32Array | undefined | null {
    const words = this.words[k];
    // Not resident: queued before takeBlocks handed it over.
    if (!words) return null;
    if (k === this.words.length - 1) return undefined;
    if (this.dirty[k]) {
      if (this.slots[k]! < 0) {
        if (!this.tracked) this.spill.track(this, this.slots);
        this.tracked = true;
        this.slots[k] = this.spill.allocSlot();
      }
      this.spill.write(this.slots[k]!, words);
      this.dirty[k] = false;
    }
    this.words[k] = null;
    this.blocks[k] = null;
    return words;
  }

  /** Makes room for rows up to i: the partial first block widened (doubling, up to full), then new blocks. */
  private grow(i: number): void {
    const last = this.blocks.length - 1;
    if (this.end <= i && last >= 0 && this.end < (last + 1) * BLOCK) this.resize(last, i);
    while (this.end <= i) {
      this.words.push(EMPTY_BLOCK.subarray(0, 0));
      this.blocks.push(null);
      this.slots.push(-1);
      this.dirty.push(true);
      this.resize(this.blocks.length - 1, i);
    }
  }

  /**
   * Gives block k, the last one (resident), room for the rows up to i in it: the first block's rows doubled at least,
   * any block a full block at most. A block that becomes full joins the spill budget.
   */
  private resize(k: number, i: number): void {
    const old = this.words[k]!;
    let rows = k > 0 ? BLOCK : Math.max(FIRST_ROWS, old.length / 2);
    while (rows < BLOCK && k * BLOCK + rows <= i) rows *= 2;
    const full = rows >= BLOCK;
    const words = (full ? this.spill.makeRoom() : undefined) ?? new Uint32Array(full ? BLOCK * 2 : rows * 2);
    words.set(EMPTY_BLOCK.subarray(0, words.length));
    words.set(old);
    this.words[k] = words;
    this.blocks[k] = new Float64Array(words.buffer);
    this.end = k * BLOCK + words.length / 2;
    if (full) this.spill.admit(this, k);
  }

  /** Reads spilled block k back (making room first, so that k itself is not what goes). */
  private load(k: number): Float64Array {
    const words = this.spill.makeRoom() ?? new Uint32Array(BLOCK * 2);
    this.readBlock(k, words);
    const block = new Float64Array(words.buffer);
    this.words[k] = words;
    this.blocks[k] = block;
    this.spill.admit(this, k);
    return block;
  }

  private loadWords(k: number): Uint32Array {
    this.load(k);
    return this.words[k]!;
  }

  /** Makes row i's block resident and marks it changed (counting the row as changed if it was there). */
  private beforeOverwrite(i: number): void {
    if (i < this.length && i < this.changedFrom) this.changedFrom = i;
    const k = i >>> 13;
    if (this.blocks[k] === null) this.load(k);
    this.dirty[k] = true;
  }

  /** Row i's block must be resident. */
  private setWords(i: number, lo: number, hi: number): void {
    const w = this.words[i >>> 13]!;
    const j = (i & (BLOCK - 1)) * 2;
    w[j] = lo;
    w[j + 1] = hi;
  }
}
