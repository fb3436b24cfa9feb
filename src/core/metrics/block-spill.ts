import { closeSync, fstatSync, openSync, readSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Rows a block holds, and its bytes: 8192 doubles, 64 KB. */
export const BLOCK_ROWS = 8192;
export const BLOCK_BYTES = BLOCK_ROWS * 8;
/** What all columns of a process keep in memory by default: 768 blocks (a 1M-step × 64-metric run is 512 MB of them). */
export const DEFAULT_BUDGET_BYTES = 48 << 20;

/** A column whose blocks the store can spill: it writes block k out (if changed) and gives its memory back. */
export interface SpillOwner {
  /**
   * Undefined when block k must stay (the block being written): the store then passes it by. Null when the owner no
   * longer holds it (handed over): the store forgets it.
   */
  spillBlock(k: number): Uint32Array | undefined | null;
}

/**
 * Keeps the resident blocks of every column of the process within one budget. Blocks join a FIFO queue when they become
 * resident (created or read back); past the budget the oldest is written to one temporary file and its memory reused.
 * The file is opened only when the first block spills (a small run never creates it), with mode 0600, and unlinked at
 * once, so nothing is left behind on a crash. Reads and writes are synchronous because columns are read synchronously.
 */
export class BlockSpill {
  readonly budgetBlocks: number;
  private readonly dir: string;
  private fd = -1;
  private closed = false;
  private path = '';
  private nextSlot = 0;
  private readonly freeSlots: number[] = [];
  /** Resident blocks in the order they became resident, from `head` on (the front is compacted now and then). */
  private owners: Array<WeakRef<SpillOwner>> = [];
  /** One weak reference per owner, not per block. */
  private readonly refs = new WeakMap<SpillOwner, WeakRef<SpillOwner>>();
  private indexes: number[] = [];
  private head = 0;
  /** Slots of a column that was garbage collected go back to the free list. */
  private readonly dropped = new FinalizationRegistry<number[]>((slots) => {
    for (const s of slots) if (s >= 0) this.freeSlots.push(s);
  });

  constructor(opts: { budgetBytes?: number; dir?: string } = {}) {
    this.budgetBlocks = Math.max(1, Math.floor((opts.budgetBytes ?? DEFAULT_BUDGET_BYTES) / BLOCK_BYTES));
    this.dir = opts.dir ?? tmpdir();
  }

  /** Blocks held in memory (those of a column already collected count until the queue reaches them). */
  get residentBlocks(): number {
    return this.owners.length - this.head;
  }

  /** Bytes the spill file holds (slots ever used), 0 before anything spilled. */
  get fileBytes(): number {
    return this.nextSlot * BLOCK_BYTES;
  }

  /** The spill file's status (mode, link count), or undefined while nothing has spilled. */
  fileStat(): { stats: Stats; path: string } | undefined {
    return this.fd < 0 ? undefined : { stats: fstatSync(this.fd), path: this.path };
  }

  /**
   * Spills the oldest blocks until one more fits, and returns the memory of the last one spilled for reuse. Call before
   * `admit`, so that the block about to become resident is never the one spilled.
   */
  makeRoom(): Uint32Array | undefined {
    let reused: Uint32Array | undefined;
    // Each pass either spills, drops a collected column's entry, or moves a pinned block to the back: bounded by the queue.
    for (let tries = this.residentBlocks; this.residentBlocks >= this.budgetBlocks && tries > 0; tries--) {
      const owner = this.owners[this.head]!.deref();
      const k = this.indexes[this.head]!;
      // Spill before moving on, so that a block whose write failed stays queued.
      const mem = owner?.spillBlock(k);
      this.head++;
      if (mem) reused = mem;
      else if (owner !== undefined && mem === undefined) this.queue(owner, k);
    }
    if (this.head > 4096 && this.head * 2 > this.owners.length) {
      this.owners = this.owners.slice(this.head);
      this.indexes = this.indexes.slice(this.head);
      this.head = 0;
    }
    return reused;
  }

  /** Block k of `owner` is now resident. */
  admit(owner: SpillOwner, k: number): void {
    this.queue(owner, k);
  }

  /** A slot for a block's first write; the owner keeps it for the block's later writes. */
  allocSlot(): number {
    if (this.closed) throw this.failure('write', this.nextSlot * BLOCK_BYTES, 'the store was closed');
    if (this.fd < 0) this.open();
    return this.freeSlots.pop() ?? this.nextSlot++;
  }

  /** Frees `slots` when `owner` is collected. Call once per owner, when it takes its first slot. */
  track(owner: object, slots: number[]): void {
    this.dropped.register(owner, slots);
  }

  write(slot: number, block: Uint32Array): void {
    const pos = slot * BLOCK_BYTES;
    try {
      for (let done = 0; done < BLOCK_BYTES;) done += writeSync(this.fd, block, done, BLOCK_BYTES - done, pos + done);
    } catch (e) {
      throw this.failure('write', pos, e);
    }
  }

  read(slot: number, into: Uint32Array): void {
    const pos = slot * BLOCK_BYTES;
    let done = 0;
    try {
      while (done < BLOCK_BYTES) {
        const n = readSync(this.fd, into, done, BLOCK_BYTES - done, pos + done);
        if (n === 0) break;
        done += n;
      }
    } catch (e) {
      throw this.failure('read', pos, e);
    }
    if (done < BLOCK_BYTES) throw this.failure('read', pos, `the file ends at byte ${pos + done}`);
  }

  /** Where and what failed: the folder (the file itself is already unlinked), the offset and the system's reason. */
  private failure(what: 'read' | 'write', pos: number, cause: unknown): Error {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new Error(`metric block spill file in ${this.dir}: could not ${what} ${BLOCK_BYTES} bytes at byte ${pos} (${why})`, {
      cause,
    });
  }

  /** Closes the file for good (tests; a process's own store lives as long as the process): blocks spilled are lost. */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.closed = true;
  }

  private queue(owner: SpillOwner, k: number): void {
    let ref = this.refs.get(owner);
    if (ref === undefined) {
      ref = new WeakRef(owner);
      this.refs.set(owner, ref);
    }
    this.owners.push(ref);
    this.indexes.push(k);
  }

  private open(): void {
    this.path = join(this.dir, `medrl-metric-blocks-${process.pid}-${randomBytes(6).toString('hex')}.bin`);
    this.fd = openSync(this.path, 'wx+', 0o600);
    if (process.platform === 'win32') {
      // Windows cannot unlink an open file: remove it when the process exits instead.
      const path = this.path;
      process.once('exit', () => {
        this.close();
        unlinkSync(path);
      });
    } else {
      unlinkSync(this.path);
    }
  }
}

/** The store every column of the process shares unless given its own. */
export const processBlockSpill = new BlockSpill();
