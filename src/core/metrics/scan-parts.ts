import { writePow5Table } from './decimal-bytes';
import { SCAN_PARTS_WASM } from './scan-parts-wasm';

/**
 * The WebAssembly fast path of a verl console step line's `key:value` parts (wasm/scan-parts.ts): 1.4-1.8x as fast as
 * the same work in JavaScript (342-471 against 201-333 MB/s for the line scan alone on the dev machine), which is most
 * of a dense log's parse. verl-console.ts's scanBody hands it the parts after the step; it reads as many as the
 * JavaScript fast path would, with the same keys, flags and values, and scanBody reads on from where it stopped.
 */
interface Exports {
  init(): void;
  pow5Table(): number;
  keyLengths(): number;
  keyBytes(): number;
  keyRoom(): number;
  maxParts(): number;
  input(): number;
  inputBytes(): number;
  outKeyStart(): number;
  outKeyEnd(): number;
  outChanged(): number;
  changedCount(): number;
  outValue(): number;
  stopped(): number;
  scanParts(len: number, first: number, base: number): number;
  memory: WebAssembly.Memory;
}

/** What scanBody needs of the scan it fills (StepLineScan; an interface here so the two modules do not import each other). */
export interface PartsSink {
  count: number;
  addParts(n: number, starts: Int32Array, ends: Int32Array, values: Float64Array, changed: Int32Array, nChanged: number): void;
}

export class ScanParts {
  private readonly x: Exports;
  private readonly bytes: Uint8Array;
  private readonly keyLen: Int32Array;
  private readonly keyStart: Int32Array;
  private readonly keyEnd: Int32Array;
  private readonly changed: Int32Array;
  private readonly value: Float64Array;
  private readonly inputAt: number;
  private readonly keyAt: number;
  private readonly keyRoom: number;
  readonly inputBytes: number;
  readonly maxParts: number;
  /** The scan whose keys the module holds: another one's call starts afresh (its keys are compared again once known). */
  private owner: object | undefined;

  constructor() {
    const module = new WebAssembly.Module(Buffer.from(SCAN_PARTS_WASM, 'base64'));
    this.x = new WebAssembly.Instance(module, { env: { abort: moduleAbort } }).exports as unknown as Exports;
    this.x.init();
    const buf = this.x.memory.buffer;
    this.bytes = new Uint8Array(buf);
    this.maxParts = this.x.maxParts();
    this.keyLen = new Int32Array(buf, this.x.keyLengths(), this.maxParts);
    this.keyStart = new Int32Array(buf, this.x.outKeyStart(), this.maxParts);
    this.keyEnd = new Int32Array(buf, this.x.outKeyEnd(), this.maxParts);
    this.changed = new Int32Array(buf, this.x.outChanged(), this.maxParts);
    this.value = new Float64Array(buf, this.x.outValue(), this.maxParts);
    this.inputAt = this.x.input();
    this.inputBytes = this.x.inputBytes();
    this.keyAt = this.x.keyBytes();
    this.keyRoom = this.x.keyRoom();
    writePow5Table(buf, this.x.pow5Table());
  }

  /**
   * Reads the parts of b[from, to) (`from` at a ` - `) into `out` as scanBody's fast path would, and returns where the
   * first part it did not read starts (`to` when it read them all). `out` is the scan of the line; `owner` the scanner
   * whose keys are compared.
   */
  read(b: Uint8Array, from: number, to: number, out: PartsSink, owner: object): number {
    const len = to - from;
    if (len > this.inputBytes) return from;
    if (this.owner !== owner) {
      this.keyLen.fill(-1);
      this.owner = owner;
    }
    this.bytes.set(len === b.length ? b : b.subarray(from, to), this.inputAt);
    const n = this.x.scanParts(len, out.count, from);
    out.addParts(n, this.keyStart, this.keyEnd, this.value, this.changed, this.x.changedCount());
    return from + this.x.stopped();
  }

  /**
   * The key now at `place` for `owner` (its bytes, or undefined where the fast path must never match it: it holds a byte
   * that stops a key). Called by the scan whenever its key at a place changes.
   */
  setKey(owner: object, place: number, key: Uint8Array | undefined): void {
    if (this.owner !== owner || place >= this.maxParts) return;
    if (key === undefined || key.length > this.keyRoom) this.keyLen[place] = -1;
    else {
      this.bytes.set(key, this.keyAt + place * this.keyRoom);
      this.keyLen[place] = key.length;
    }
  }
}

function moduleAbort(): never {
  throw new Error('the verl line scanner (WebAssembly) stopped on an internal check');
}

let shared: ScanParts | undefined;

/** This thread's instance (its key copies belong to one scan at a time; see `owner`). */
export function scanParts(): ScanParts {
  return (shared ??= new ScanParts());
}
