import { writePow5Table } from './decimal-bytes';
import { SCAN_PARTS_WASM } from './scan-parts-wasm';
import { lineTextEnd } from '../io/line-reader';

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
  runInput(): number;
  outLineStep(): number;
  outLineCount(): number;
  outLineValues(): number;
  maxLines(): number;
  valueRoom(): number;
  stopReason(): number;
  scanLines(len: number, at: number): number;
  memory: WebAssembly.Memory;
}

/** Why scanLines stopped (wasm/scan-parts.ts). */
const END = 0;
const DECLINED = 1;
const NOISE = 2;

const NL = 0x0a;
const STEP = Buffer.from('step:');
/** The first window of a run copied into the module: small, so a step line among other output costs little copying. */
const FIRST_WINDOW = 16 << 10;

/**
 * Where readRun hands over what it read: whole step lines (their steps, part counts, and values one after another), and
 * the lines holding `step:` that it did not take, to be read line by line.
 */
export interface LineRunSink {
  lines(n: number, steps: Float64Array, counts: Int32Array, values: Float64Array): void;
  /** A line to read as feedBytes does: b[from, to), without its newline (nor a CR before it). */
  other(from: number, to: number): void;
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
  private readonly runAt: number;
  private readonly lineSteps: Float64Array;
  private readonly lineCounts: Int32Array;
  private readonly lineValues: Float64Array;
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
    this.runAt = this.x.runInput();
    this.lineSteps = new Float64Array(buf, this.x.outLineStep(), this.x.maxLines());
    this.lineCounts = new Int32Array(buf, this.x.outLineCount(), this.x.maxLines());
    this.lineValues = new Float64Array(buf, this.x.outLineValues(), this.x.valueRoom());
    writePow5Table(buf, this.x.pow5Table());
  }

  /**
   * Reads the run of whole lines b[from, to) (`to` just past a newline) for `owner`: the step lines that verl-console.ts's
   * fast path would read whole with the keys the line before had go to `sink.lines` in batches, without a call per line
   * or part; the other lines holding `step:` go to `sink.other` one by one, in their place; lines without it are skipped
   * (found with Buffer.indexOf, as readLineBytes's `matching` would). A line the module cannot hold goes to `other`.
   */
  readRun(b: Buffer, from: number, to: number, owner: object, sink: LineRunSink): void {
    // The window: b[winFrom, winTo) is at runAt, whole lines. It doubles while lines are taken one window after another.
    let winFrom = 0;
    let winTo = 0;
    let want = FIRST_WINDOW;
    for (let p = from; p < to;) {
      if (p < winFrom || p >= winTo) {
        const end = Math.min(to, p + Math.min(want, this.inputBytes));
        // Whole lines only: the window ends after the last newline in it.
        const last = end === to ? to : b.lastIndexOf(NL, end - 1) + 1;
        if (last <= p) {
          if (want < this.inputBytes) want *= 2;
          else p = this.other(b, p, sink); // a line longer than the module's input
          continue;
        }
        this.bytes.set(b.subarray(p, last), this.runAt);
        [winFrom, winTo] = [p, last];
      }
      // Before each call: a line handed to `other` may have been read by another scan (a line read as text makes its
      // own), which left its keys here; the next line then goes to `other` too, which gives the module owner's back.
      if (this.owner !== owner) {
        this.keyLen.fill(-1);
        this.owner = owner;
      }
      const n = this.x.scanLines(winTo - winFrom, p - winFrom);
      if (n > 0) sink.lines(n, this.lineSteps, this.lineCounts, this.lineValues);
      p = winFrom + this.x.stopped();
      const why = this.x.stopReason();
      if (why === DECLINED) p = this.other(b, p, sink);
      else if (why === NOISE) {
        const next = b.indexOf(STEP, p);
        p = next < 0 || next >= to ? to : b.lastIndexOf(NL, next - 1) + 1;
      } else if (why === END && p === winTo && n > 0) want *= 2;
    }
  }

  /** Hands the line at p to `sink.other`; returns where the next one starts. */
  private other(b: Buffer, p: number, sink: LineRunSink): number {
    const nl = b.indexOf(NL, p);
    sink.other(p, lineTextEnd(b, p, nl));
    return nl + 1;
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
