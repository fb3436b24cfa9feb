// AssemblyScript, compiled to WebAssembly by scripts/build-wasm.mjs into ../scan-parts-wasm.ts (not TypeScript: tsc
// and eslint leave this folder out).
//
// The fast path of verl-console.ts's scanBody, for the parts of a step line after its step: `key:value` parts joined by
// ` - `, each key either the one the previous line had at that place (compared against a copy the JavaScript side keeps
// here) or read up to its `:`, each value a plain decimal read into the same double Number() gives. It stops at the first
// part that path would not take (verl-console.ts reads it and the rest), so what it accepts is exactly what the
// JavaScript fast path accepts, with the same keys, `same` flags and values. 1.4-1.8x as fast as the JavaScript (scan-parts.ts).
//
// scanLines goes further, for a log read in runs of lines (MetricLogParser.feedRun): it takes whole step lines one after
// another, prefix, step and parts, as long as each line's keys are the ones the line before had, and writes only their
// steps and values; the JavaScript side then stores a batch a column at a time. That made a dense log's parse 1.6x as
// fast on one thread.

import { decimalToDouble, POW5_BYTES, setPow5 } from './decimal';
export { pow5Table } from './decimal';

/** Parts one call reads at most. */
const MAX_PARTS: i32 = 1024;
/** Key bytes kept per place: a longer key is never compared here (its part is read up to its `:`). */
const KEY_ROOM: i32 = 252;
/** Line bytes one call reads at most. */
const INPUT_BYTES: i32 = 1 << 20;
/** Whole lines one scanLines call takes at most, and the values it keeps for them. */
const MAX_LINES: i32 = 4096;
const VALUE_ROOM: i32 = 1 << 17;
// The areas below are laid out past the module's static data by init() (reserving them with memory.data would put
// a megabyte of zeros into the binary).
/** The previous line's key at each place: its length (-1: none, or never compared) and its bytes. */
let KEY_LEN: usize = 0;
let KEY_BYTES: usize = 0;
/** What a call read, per part: key start and end (offsets in the caller's buffer), value; and which parts' keys are not known to be the previous line's. */
let OUT_KEY_START: usize = 0;
let OUT_KEY_END: usize = 0;
let OUT_CHANGED: usize = 0;
let OUT_VALUE: usize = 0;
let INPUT: usize = 0;
/** scanLines's own: its window of a run of lines (apart from INPUT: the JavaScript side reads a line it did not take between calls), and what it took: each line's step and part count, and their values one after another. */
let RUN_INPUT: usize = 0;
let OUT_LINE_STEP: usize = 0;
let OUT_LINE_COUNT: usize = 0;
let OUT_LINE_VALUES: usize = 0;

/** Lays the areas out and grows the memory to hold them: call once, before anything else (views made before go stale). */
export function init(): void {
  let at = (__heap_base + 15) & ~15;
  setPow5(at);
  at += POW5_BYTES;
  KEY_LEN = at;
  at += MAX_PARTS * 4;
  KEY_BYTES = at;
  at += MAX_PARTS * KEY_ROOM;
  OUT_KEY_START = at;
  at += MAX_PARTS * 4;
  OUT_KEY_END = at;
  at += MAX_PARTS * 4;
  OUT_VALUE = at;
  at += MAX_PARTS * 8;
  OUT_CHANGED = at;
  at += MAX_PARTS * 4;
  INPUT = at;
  at += INPUT_BYTES + 16;
  OUT_LINE_STEP = at;
  at += MAX_LINES * 8;
  OUT_LINE_COUNT = at;
  at += MAX_LINES * 4;
  OUT_LINE_VALUES = at;
  at += VALUE_ROOM * 8;
  RUN_INPUT = at;
  // scanLines compares a key before knowing the line holds it: reads may go a key's length past the window.
  at += INPUT_BYTES + KEY_ROOM + 16;
  const pages = <i32>((at + 0xffff) >> 16);
  if (pages > memory.size()) memory.grow(pages - memory.size());
  memory.fill(KEY_LEN, 0xff, MAX_PARTS * 4);
}

/** Where the last scanDecimal ended and what it read. */
let decEnd: usize = 0;
let decValue: f64 = 0;
/** Where the last call stopped (an offset in the input), and how many of its parts' keys it did not match. */
let stoppedAt: i32 = 0;
let changed: i32 = 0;

export function keyLengths(): usize {
  return KEY_LEN;
}
export function keyBytes(): usize {
  return KEY_BYTES;
}
export function keyRoom(): i32 {
  return KEY_ROOM;
}
export function maxParts(): i32 {
  return MAX_PARTS;
}
export function input(): usize {
  return INPUT;
}
export function inputBytes(): i32 {
  return INPUT_BYTES;
}
export function outKeyStart(): usize {
  return OUT_KEY_START;
}
export function outKeyEnd(): usize {
  return OUT_KEY_END;
}
export function outChanged(): usize {
  return OUT_CHANGED;
}
export function changedCount(): i32 {
  return changed;
}
export function outValue(): usize {
  return OUT_VALUE;
}
export function stopped(): i32 {
  return stoppedAt;
}
export function runInput(): usize {
  return RUN_INPUT;
}
export function outLineStep(): usize {
  return OUT_LINE_STEP;
}
export function outLineCount(): usize {
  return OUT_LINE_COUNT;
}
export function outLineValues(): usize {
  return OUT_LINE_VALUES;
}
export function maxLines(): i32 {
  return MAX_LINES;
}
export function valueRoom(): i32 {
  return VALUE_ROOM;
}
/** Why the last scanLines call stopped (see the constants below). */
export function stopReason(): i32 {
  return reason;
}

/** decimal-bytes.ts's scanDecimalIn: the same grammar, the same refusals, the same double. */
function scanDecimal(p: usize, to: usize): bool {
  if (p >= to) return false;
  const neg = load<u8>(p) == 45;
  if (neg || load<u8>(p) == 43) p++;
  let m: u64 = 0;
  let sig: i32 = 0;
  let any = false;
  let point: usize = 0; // just past the '.', 0 for none
  while (p < to) {
    const d = <i32>load<u8>(p) - 48;
    if (<u32>d <= 9) {
      any = true;
      if (sig != 0 || d != 0) {
        // Past 19 digits the result is refused anyway: m stops growing so it cannot wrap.
        if (sig < 19) m = m * 10 + <u64>d;
        sig++;
      }
    } else if (d == -2 && point == 0) point = p + 1;
    else break;
    p++;
  }
  let scale: i32 = point == 0 ? 0 : <i32>(point - p);
  if (!any || sig > 19) return false;
  if (p < to && (load<u8>(p) == 101 || load<u8>(p) == 69)) {
    if (++p >= to) return false;
    const eneg = load<u8>(p) == 45;
    if ((eneg || load<u8>(p) == 43) && ++p >= to) return false;
    let e: i32 = 0;
    const start = p;
    for (; p < to; p++) {
      const d = <i32>load<u8>(p) - 48;
      if (<u32>d > 9) break;
      if (e < 100000) e = e * 10 + d;
    }
    if (p == start) return false;
    scale += eneg ? -e : e;
  }
  decEnd = p;
  if (sig == 0) {
    decValue = neg ? -0.0 : 0.0;
    return true;
  }
  const v = decimalToDouble(m, scale);
  if (isNaN(v)) return false;
  decValue = neg ? -v : v;
  return true;
}

/** A byte that ends a key on the fast path (verl-console.ts's KEY_STOP): `:`, space, ESC, CR, `{`, `"`. */
function keyStop(c: u32): bool {
  return c == 58 || c == 32 || c == 27 || c == 13 || c == 123 || c == 34;
}

/** ` - ` at p, within the line. */
function isSep(p: usize, to: usize): bool {
  return p + 2 < to && load<u8>(p) == 32 && load<u8>(p + 1) == 45 && load<u8>(p + 2) == 32;
}

/** The `keyLen` bytes at p are the key kept for `place`: compared eight bytes at a time. */
function sameKey(p: usize, place: i32, keyLen: i32): bool {
  const key = KEY_BYTES + <usize>place * KEY_ROOM;
  let k: i32 = 0;
  while (k + 8 <= keyLen && load<u64>(p + <usize>k) == load<u64>(key + <usize>k)) k += 8;
  while (k < keyLen && load<u8>(p + <usize>k) == load<u8>(key + <usize>k)) k++;
  return k == keyLen;
}

/**
 * Reads parts of the `len` input bytes (from a ` - `), the first at place `first`; the input is the caller's buffer from
 * offset `base`, which the key bounds written are offsets in. Returns how many parts it read; `stopped()` is where the
 * first one it did not read starts (its ` - `), or `len`.
 */
export function scanParts(len: i32, first: i32, base: i32): i32 {
  const to = INPUT + <usize>len;
  let i = INPUT;
  let n: i32 = 0;
  changed = 0;
  while (i < to && n < MAX_PARTS) {
    const start = i + 3;
    const place = first + n;
    if (place >= MAX_PARTS) break;
    // The previous key at this place: compared eight bytes at a time.
    const keyLen = load<i32>(KEY_LEN + ((<usize>place) << 2));
    let j = start;
    let same = false;
    if (keyLen > 0 && start + <usize>keyLen < to && load<u8>(start + <usize>keyLen) == 58) {
      same = sameKey(start, place, keyLen);
    }
    if (same) j = start + <usize>keyLen;
    else {
      while (j < to && !keyStop(load<u8>(j))) j++;
      if (j >= to || load<u8>(j) != 58 || j == start) break;
    }
    const vs = j + 1;
    // NumPy reprs (np.float64(x)) are left to the JavaScript side.
    if (vs + 2 < to && load<u8>(vs) == 0x6e && load<u8>(vs + 1) == 0x70 && load<u8>(vs + 2) == 0x2e) break;
    if (!scanDecimal(vs, to)) break;
    const end = decEnd;
    if (end != to && !isSep(end, to)) break;
    store<i32>(OUT_KEY_START + ((<usize>n) << 2), <i32>(start - INPUT) + base);
    store<i32>(OUT_KEY_END + ((<usize>n) << 2), <i32>(j - INPUT) + base);
    if (!same) {
      store<i32>(OUT_CHANGED + ((<usize>changed) << 2), n);
      changed++;
    }
    store<f64>(OUT_VALUE + ((<usize>n) << 3), decValue);
    n++;
    i = end;
  }
  stoppedAt = <i32>(i - INPUT);
  return n;
}

/** scanLines stopped at the end of its window, every line taken. */
const END: i32 = 0;
/** ...at a line holding `step:` that it does not take whole: the JavaScript side reads it (verl-console.ts). */
const DECLINED: i32 = 1;
/** ...at a line without `step:` (other output: the JavaScript side looks for the next step line). */
const NOISE: i32 = 2;
/** ...with its output full. */
const FULL: i32 = 3;
let reason: i32 = END;

/** verl-console.ts's ansiEnd: the end of the ANSI escape code at p, or 0 when p starts none (within [p, to)). */
function ansiEnd(p: usize, to: usize): usize {
  let j = p + 1;
  if (j >= to || load<u8>(j) != 0x5b) return 0;
  j++;
  while (j < to) {
    const c = load<u8>(j);
    if (!((c >= 0x30 && c <= 0x39) || c == 0x3b || c == 0x3f)) break;
    j++;
  }
  while (j < to && load<u8>(j) >= 0x20 && load<u8>(j) <= 0x2f) j++;
  return j < to && load<u8>(j) >= 0x40 && load<u8>(j) <= 0x7e ? j + 1 : 0;
}

/**
 * verl-console.ts's isRayPrefix for [p, to) (before `step:`), but false also where the JavaScript side would look at the
 * line as another format (a CR, `{` or `"`): such a line is left to it.
 */
function rayPrefix(p: usize, to: usize): bool {
  let first: i32 = -1;
  let lastNonSpace: i32 = -1;
  let pid: i32 = 0;
  for (let i = p; i < to;) {
    const c = <i32>load<u8>(i);
    if (c == 27) {
      const e = ansiEnd(i, to);
      if (e != 0) {
        i = e;
        continue;
      }
    }
    if (c == 13 || c == 123 || c == 34) return false;
    if (first < 0) first = c;
    if (c != 32) lastNonSpace = c;
    // "pid=", as verl-console.ts's PID state.
    if (pid < 4) {
      const want = pid == 0 ? 0x70 : pid == 1 ? 0x69 : pid == 2 ? 0x64 : 0x3d;
      pid = c == want ? pid + 1 : c == 0x70 ? 1 : 0;
    }
    i++;
  }
  return first < 0 || (first == 0x28 && lastNonSpace == 0x29 && pid == 4);
}

/** The line ends at p: a newline, or a CR just before one (which the JavaScript side leaves out of the line). */
function eol(p: usize): bool {
  const c = load<u8>(p);
  return c == 10 || (c == 13 && load<u8>(p + 1) == 10);
}

/**
 * Takes the whole verl step lines of the `len` bytes at RUN_INPUT from offset `at` on, which the JavaScript side wrote
 * there ending with a newline. A line is taken only where verl-console.ts's fast path reads all of it, each part's key
 * the one the previous line had at that place, and no part the slow path's: then the JavaScript side would make of it
 * exactly the step and values written here. It stops at the first line it does not take (`stopReason()` says why,
 * `stopped()` where that line starts) or when its output is full; returns how many lines it took.
 */
export function scanLines(len: i32, at: i32): i32 {
  const to = RUN_INPUT + <usize>len;
  let p = RUN_INPUT + <usize>at;
  let lines: i32 = 0;
  let used: i32 = 0;
  reason = END;
  while (p < to) {
    if (lines == MAX_LINES || used + MAX_PARTS > VALUE_ROOM) {
      reason = FULL;
      break;
    }
    // The first `step:` of the line, or its end: every line in the window ends with a newline, so neither reads past it.
    let first = p;
    for (;;) {
      const c = load<u8>(first);
      if (c == 10) break;
      if (
        c == 0x73 &&
        load<u8>(first + 1) == 0x74 &&
        load<u8>(first + 2) == 0x65 &&
        load<u8>(first + 3) == 0x70 &&
        load<u8>(first + 4) == 58
      )
        break;
      first++;
    }
    if (load<u8>(first) == 10) {
      reason = NOISE;
      break;
    }
    reason = DECLINED;
    if (!rayPrefix(p, first)) break;
    // The step: plain digits (fewer than 15) up to the line's end or a separator.
    let i = first + 5;
    let step: i64 = 0;
    while (i - first < 20) {
      const d = <i32>load<u8>(i) - 48;
      if (<u32>d > 9) break;
      step = step * 10 + <i64>d;
      i++;
    }
    if (i == first + 5 || i - first >= 20) break;
    let n: i32 = 0;
    let whole = false;
    for (;;) {
      if (eol(i)) {
        whole = true;
        break;
      }
      if (!isSep(i, to)) break;
      const start = i + 3;
      // More parts than places are left to the JavaScript side (as is a separator ending the line: no key matches there).
      if (n >= MAX_PARTS) break;
      const keyLen = load<i32>(KEY_LEN + ((<usize>n) << 2));
      if (keyLen <= 0 || load<u8>(start + <usize>keyLen) != 58) break;
      // The previous line's key at this place (which holds no newline, so a match ends within this line).
      if (!sameKey(start, n, keyLen)) break;
      let vs = start + <usize>keyLen + 1;
      let close = false;
      // np.float64(x), np.int64(x), ...: a NumPy 2 repr, read as verl-console.ts's fast path reads it.
      if (load<u8>(vs) == 0x6e && load<u8>(vs + 1) == 0x70 && load<u8>(vs + 2) == 0x2e) {
        let q = vs + 3;
        for (;;) {
          const c = load<u8>(q);
          if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39))) break;
          q++;
        }
        if (load<u8>(q) != 0x28) break;
        vs = q + 1;
        close = true;
      }
      if (!scanDecimal(vs, to)) break;
      let end = decEnd;
      if (close) {
        if (load<u8>(end) != 0x29) break;
        end++;
      }
      store<f64>(OUT_LINE_VALUES + ((<usize>(used + n)) << 3), decValue);
      n++;
      i = end;
    }
    if (!whole) break;
    store<f64>(OUT_LINE_STEP + ((<usize>lines) << 3), <f64>step);
    store<i32>(OUT_LINE_COUNT + ((<usize>lines) << 2), n);
    used += n;
    lines++;
    p = load<u8>(i) == 10 ? i + 1 : i + 2;
    reason = END;
  }
  stoppedAt = <i32>(p - RUN_INPUT);
  return lines;
}
