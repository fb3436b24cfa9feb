import { parseMetricValue, setMetric } from './metric-value';
import { DecimalScan, scanDecimalIn } from './decimal-bytes';
import { scanParts, type ScanParts } from './scan-parts';

/** One step line: its metrics, and the `key:value` parts that did not parse (a torn or corrupt line). */
export interface ParsedStepLine {
  step: number;
  metrics: Record<string, number>;
  bad: string[];
  /** Keys logged without a value (`None`, JSON `null`): counted per metric and reported once (MissingValues). */
  missing?: string[];
}

const ESC = 0x1b;
const SPACE = 0x20;
const DASH = 0x2d;
const COLON = 0x3a;
const PID = [0x70, 0x69, 0x64, 0x3d]; // "pid="
const STEP = [0x73, 0x74, 0x65, 0x70, 0x3a]; // "step:"
/** Bytes that end a key on the fast path: ':', and what needs a closer look (space, ESC, CR, '{', '"'). */
const KEY_STOP = new Uint8Array(256);
const NO_WORDS = new Int32Array(0);
for (const c of [COLON, SPACE, ESC, 0x0d, 0x7b, 0x22]) KEY_STOP[c] = 1;

/**
 * What scanVerlConsoleLine found on one line. One instance is reused line after line, so the hot path allocates nothing
 * per line or value: keys are spans of `bytes` (the line itself, or a copy without ANSI codes), values a Float64Array.
 * verl prints the same keys in the same order every step, so the scan compares each key, as it reads it, with the key
 * the previous line had at that position; `slots[i]` holds what the caller attached to key i (its column) and is
 * cleared when key i differs: no key string is made or hashed unless the keys change.
 */
export class StepLineScan<Slot = unknown> {
  step = 0;
  count = 0;
  bytes: Uint8Array = new Uint8Array(0);
  keyStart = new Int32Array(64);
  keyEnd = new Int32Array(64);
  values = new Float64Array(64);
  /** Unreadable `key:value` parts, as text (a torn or corrupt line). */
  bad: string[] = [];
  /** Keys whose value was `None`. */
  missing: string[] = [];
  /** The line's last part was unreadable: where a line torn by other output ends. */
  lastBad = false;
  /** The line has verl's shape but its step is not a number (`step:x - ...`): its start, for the message. */
  badStep: string | undefined;
  /**
   * A CR, `{` or `"` is on the line, so it may be a TRL dict (amid tqdm's carriage returns) or a JSONL record: those
   * formats are checked first, so the caller must look at such a line as text.
   */
  otherFormat = false;
  readonly slots: (Slot | undefined)[] = [];
  /** The keys of the lines scanned so far, by position: each key's bytes the last time it changed. */
  readonly keys: Uint8Array[] = [];
  /**
   * keys[i] as 32-bit words (its last len % 4 bytes left out), to compare four bytes at a time; NO_WORDS where keys[i]
   * holds a byte that stops the fast path.
   */
  readonly keyWords: Int32Array[] = [];
  /** A view of the buffer being scanned, for its 32-bit reads at any offset. */
  private view: DataView = new DataView(new ArrayBuffer(0));
  private viewed: Uint8Array | undefined;
  readonly dec = new DecimalScan();
  private stripped = new Uint8Array(0);
  /** The WebAssembly fast path for the parts after the step (scan-parts.ts); off only to compare with the JavaScript one. */
  readonly parts: ScanParts | undefined;

  constructor(opts: { wasm?: boolean } = {}) {
    this.parts = opts.wasm === false ? undefined : scanParts();
  }

  reset(): void {
    this.count = 0;
    if (this.bad.length) this.bad = [];
    if (this.missing.length) this.missing = [];
    this.lastBad = false;
    this.badStep = undefined;
    this.otherFormat = false;
  }

  /** A DataView of b's bytes, dv.getInt32(i) reading b[i..i + 4) (made again only when b changes: the line reader recycles a few). */
  viewOf(b: Uint8Array): DataView {
    if (this.viewed !== b) {
      this.viewed = b;
      this.view = new DataView(b.buffer, b.byteOffset, b.length);
    }
    return this.view;
  }

  key(i: number): string {
    return decode(this.bytes, this.keyStart[i]!, this.keyEnd[i]!);
  }

  /** The key the last line read had at place i (what a batch of lines with the same keys has there). */
  placeKey(i: number): string {
    const k = this.keys[i]!;
    return decode(k, 0, k.length);
  }

  /**
   * Adds a key; the caller writes its value at the index returned (a double passed to a call may be boxed, one written
   * to a Float64Array is not). `same`: the key is known to equal the previous line's key at this position.
   */
  push(ks: number, ke: number, same: boolean): number {
    const n = this.count++;
    if (!same) this.keyAt(n, ks, ke);
    if (n === this.values.length) this.room(n + 1);
    this.keyStart[n] = ks;
    this.keyEnd[n] = ke;
    this.lastBad = false;
    return n;
  }

  /**
   * Adds the `n` parts the WebAssembly fast path read (scan-parts.ts: key bounds in this.bytes, values, and which keys
   * are not known to equal the previous line's).
   */
  addParts(n: number, starts: Int32Array, ends: Int32Array, values: Float64Array, changed: Int32Array, nChanged: number): void {
    const at = this.count;
    if (at + n > this.values.length) this.room(at + n);
    this.keyStart.set(starts.subarray(0, n), at);
    this.keyEnd.set(ends.subarray(0, n), at);
    this.values.set(values.subarray(0, n), at);
    for (let c = 0; c < nChanged; c++) {
      const p = changed[c]!;
      this.keyAt(at + p, starts[p]!, ends[p]!);
    }
    this.count = at + n;
    if (n > 0) this.lastBad = false;
  }

  /** The key at place n is bytes[ks, ke), which may differ from the previous line's there. */
  private keyAt(n: number, ks: number, ke: number): void {
    const k = this.keys[n];
    const len = ke - ks;
    let eq = k !== undefined && k.length === len;
    for (let j = 0; eq && j < len; j++) eq = k![j] === this.bytes[ks + j];
    if (!eq) {
      const key = new Uint8Array(this.bytes.subarray(ks, ke));
      this.keys[n] = key;
      this.slots[n] = undefined;
      const plain = key.every((c) => KEY_STOP[c] === 0);
      this.keyWords[n] = plain ? new Int32Array(key.buffer, 0, len >> 2) : NO_WORDS;
    }
    // The fast path's copy too (it may not hold this key even where ours did not change).
    this.parts?.setKey(this, n, this.keyWords[n] === NO_WORDS ? undefined : this.keys[n]);
  }

  /** Grows the per-part arrays to hold `n` parts or more (doubling: a push past the end replaces them). */
  private room(n: number): void {
    let size = this.values.length * 2;
    while (size < n) size *= 2;
    this.keyStart = grow(this.keyStart, new Int32Array(size));
    this.keyEnd = grow(this.keyEnd, new Int32Array(size));
    this.values = grow(this.values, new Float64Array(size));
  }

  pushBad(part: string): void {
    this.bad.push(part);
    this.lastBad = true;
  }

  /** b[from, to) without its ANSI escape codes, in a buffer reused between lines. */
  stripAnsi(b: Uint8Array, from: number, to: number): Uint8Array {
    if (this.stripped.length < to - from) this.stripped = new Uint8Array(Math.max(to - from, this.stripped.length * 2));
    const out = this.stripped;
    let n = 0;
    for (let i = from; i < to;) {
      if (b[i] === ESC) {
        const e = ansiEnd(b, i, to);
        if (e > 0) {
          i = e;
          continue;
        }
      }
      out[n++] = b[i++]!;
    }
    return out.subarray(0, n);
  }
}

function grow<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function decode(b: Uint8Array, from: number, to: number): string {
  return Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('utf8');
}

/** The end of the ANSI escape code (`ESC [ params intermediates final`) at b[i], or -1 when b[i] starts none. */
function ansiEnd(b: Uint8Array, i: number, to: number): number {
  let j = i + 1;
  if (j >= to || b[j] !== 0x5b) return -1;
  j++;
  while (j < to && ((b[j]! >= 0x30 && b[j]! <= 0x39) || b[j] === 0x3b || b[j] === 0x3f)) j++;
  while (j < to && b[j]! >= 0x20 && b[j]! <= 0x2f) j++;
  return j < to && b[j]! >= 0x40 && b[j]! <= 0x7e ? j + 1 : -1;
}

function isOtherFormatByte(c: number): boolean {
  return c === 0x0d || c === 0x7b || c === 0x22;
}

/** ` - ` (verl's separator) at b[i], within the line. */
function isSep(b: Uint8Array, i: number, to: number): boolean {
  return i + 2 < to && b[i] === SPACE && b[i + 1] === DASH && b[i + 2] === SPACE;
}

/**
 * Before `step:` only a Ray actor prefix `(Name pid=N[, ip=A]) ` may come, maybe coloured: checks the bytes with ANSI
 * codes skipped (nothing visible at all is fine too).
 */
function isRayPrefix(b: Uint8Array, from: number, to: number, out: StepLineScan): boolean {
  let first = -1;
  let lastNonSpace = -1;
  let pid = 0;
  for (let i = from; i < to;) {
    const c = b[i]!;
    if (c === ESC) {
      const e = ansiEnd(b, i, to);
      if (e > 0) {
        i = e;
        continue;
      }
    }
    if (isOtherFormatByte(c)) out.otherFormat = true;
    if (first < 0) first = c;
    if (c !== SPACE) lastNonSpace = c;
    if (pid < 4) pid = c === PID[pid] ? pid + 1 : c === PID[0] ? 1 : 0;
    i++;
  }
  return first < 0 || (first === 0x28 && lastNonSpace === 0x29 && pid === 4);
}

function indexOfStep(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 5 <= to; i++) {
    if (b[i] === STEP[0] && b[i + 1] === STEP[1] && b[i + 2] === STEP[2] && b[i + 3] === STEP[3] && b[i + 4] === STEP[4]) return i;
  }
  return -1;
}

/**
 * Scans `step:12 - actor/pg_loss:-0.0123 - critic/score/mean:0.5625 - ...` (verl's console logger) in b[from, to),
 * optionally after Ray's `(TaskRunner pid=15930, ip=10.4.1.33) ` prefix and ANSI colour codes, into `out`. Returns
 * false for any other line. Hot path of a 1 GB log: one pass over the bytes, each plain value read in place by
 * scanDecimal (bit-exact with Number()), no string made unless a part needs the slow path (NumPy reprs other than
 * `np.float64(x)`, `nan`, `inf`, corrupt parts), where the text goes through the same rules as before.
 */
export function scanVerlConsoleLine(b: Uint8Array, from: number, to: number, out: StepLineScan): boolean {
  out.reset();
  const first = indexOfStep(b, from, to);
  if (first < 0) return false;
  if (!isRayPrefix(b, from, first, out)) return false;
  const r = scanBody(b, first, to, out);
  if (r !== 'ansi') return r;
  // Colour codes after `step:` (Ray colours only its prefix, but a terminal logger may colour more): scan a copy without them.
  const other = out.otherFormat;
  out.reset();
  out.otherFormat = other;
  const s = out.stripAnsi(b, first, to);
  return scanBody(s, 0, s.length, out) === true;
}

/** The line from `step:` on. 'ansi': it holds an ANSI code, to be stripped first. */
function scanBody(b: Uint8Array, first: number, to: number, out: StepLineScan): boolean | 'ansi' {
  out.bytes = b;
  const dec = out.dec;
  // The step: digits up to the first separator.
  let i = first + 5;
  let step = 0;
  while (i < to && b[i]! >= 0x30 && b[i]! <= 0x39 && i - first < 20) step = step * 10 + (b[i++]! - 0x30);
  if (i === first + 5 || i - first >= 20 || (i < to && !isSep(b, i, to))) {
    // Not plain digits: the text rules (spaces trimmed, Number(), a non-negative integer).
    let end = first + 5;
    while (end < to && !isSep(b, end, to)) {
      if (b[end] === ESC) return 'ansi';
      if (isOtherFormatByte(b[end]!)) out.otherFormat = true;
      end++;
    }
    const text = decode(b, first + 5, end).trim();
    const n = Number(text);
    if (text.length === 0 || !Number.isInteger(n) || n < 0) {
      if (end < to) out.badStep = decode(b, first, end).slice(0, 40);
      return false;
    }
    step = n;
    i = end;
  }
  out.step = step;
  const dv = out.viewOf(b);
  if (out.parts !== undefined && i < to) i = out.parts.read(b, i, to, out, out);
  while (i < to) {
    const start = i + 3;
    // Fast path: a key without ':' or odd bytes, then a plain number (or np.float64(number)) ending at a separator.
    // The key is most likely the previous line's at this position: compared four bytes at a time, else read byte by
    // byte (a key with a stop byte is never matched whole, so the byte loop sees what that byte means).
    const words = out.keyWords[out.count];
    let same = false;
    let j = start;
    let c = COLON;
    if (words !== undefined && words !== NO_WORDS) {
      const key = out.keys[out.count]!;
      const len = key.length;
      if (start + len < to && b[start + len] === COLON) {
        let w = 0;
        while (w < words.length && dv.getInt32(start + 4 * w, true) === words[w]) w++;
        if (w === words.length) {
          let k = w * 4;
          while (k < len && b[start + k] === key[k]) k++;
          same = k === len;
          if (same) j = start + len;
        }
      }
    }
    if (!same) {
      for (; j < to; j++) {
        c = b[j]!;
        if (KEY_STOP[c] !== 0) break;
      }
    }
    if (c === COLON && j > start && j < to) {
      let vs = j + 1;
      let close = -1;
      if (b[vs] === 0x6e && b[vs + 1] === 0x70 && b[vs + 2] === 0x2e) {
        // np.float64(x), np.int64(x), ...: a NumPy 2 repr.
        let k = vs + 3;
        while (k < to && ((b[k]! >= 0x61 && b[k]! <= 0x7a) || (b[k]! >= 0x30 && b[k]! <= 0x39))) k++;
        if (b[k] === 0x28) {
          vs = k + 1;
          close = 1;
        }
      }
      if (scanDecimalIn(b, dv, vs, to, dec)) {
        let end = dec.end;
        if (close > 0) end = b[end] === 0x29 ? end + 1 : -1;
        if (end === to || (end > 0 && isSep(b, end, to))) {
          // Pushed first: a push past the capacity replaces `out.values` (read before the call, it would be the old array).
          const n = out.push(start, j, same);
          out.values[n] = dec.value;
          i = end;
          continue;
        }
      }
    }
    const end = slowPart(b, start, to, out);
    if (end < 0) return 'ansi';
    i = end;
  }
  return true;
}

/**
 * A part the fast path could not read: finds its end and last ':' outside parentheses (keys may contain ':', values
 * only inside a repr: `tensor(1.2, device='cuda:0')`), and reads it by the text rules: Number(), else
 * parseMetricValue (np.float64(...), tensor(...), nan, inf), else it is unreadable.
 * Returns the part's end, or -1 when it holds an ANSI code.
 */
function slowPart(b: Uint8Array, start: number, to: number, out: StepLineScan): number {
  let end = start;
  let colon = -1;
  let depth = 0;
  for (; end < to && !isSep(b, end, to); end++) {
    const c = b[end]!;
    if (c === ESC) return -1;
    if (c === COLON && depth === 0) colon = end;
    else if (c === 0x28) depth++;
    else if (c === 0x29 && depth > 0) depth--;
    else if (isOtherFormatByte(c)) out.otherFormat = true;
  }
  if (colon <= start) {
    const part = decode(b, start, end);
    if (part.trim() !== '') out.pushBad(part);
    return end;
  }
  const raw = decode(b, colon + 1, end);
  let v = raw.length === 0 ? NaN : Number(raw);
  if (Number.isNaN(v)) {
    const parsed = parseMetricValue(raw);
    if (parsed === undefined && raw.trim() === 'None') {
      out.missing.push(decode(b, start, colon).trim());
      return end;
    }
    if (parsed === undefined) {
      out.pushBad(decode(b, start, end));
      return end;
    }
    v = parsed;
  }
  let ks = start;
  let ke = colon;
  while (ks < ke && b[ks] === SPACE) ks++;
  while (ke > ks && b[ke - 1] === SPACE) ke--;
  const n = out.push(ks, ke, false);
  out.values[n] = v;
  return end;
}

/** Parses a verl console step line into an object (for one-off callers; the log parser reads bytes into its series). */
export function parseVerlConsoleLine(line: string): ParsedStepLine | undefined {
  const scan = new StepLineScan();
  const b = Buffer.from(line);
  if (!scanVerlConsoleLine(b, 0, b.length, scan)) return undefined;
  const metrics: Record<string, number> = {};
  for (let i = 0; i < scan.count; i++) setMetric(metrics, scan.key(i), scan.values[i]!);
  return { step: scan.step, metrics, bad: scan.bad, ...(scan.missing.length ? { missing: scan.missing } : {}) };
}
