import { eventLoopTurn } from './event-loop-turn';
import type { Host } from '../remote/host';

/** One line of a file: its text (without the newline, and without a CR before it) and its byte span. */
export interface Line {
  text: string;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line's newline: where reading resumes. */
  end: number;
  /** False for a last line with no newline (still being written, or a truncated file). */
  complete: boolean;
  /** Longer than `maxLineBytes`: its bytes were skipped, not kept (`text` is empty). */
  tooLong?: boolean;
}

interface ReadLinesOptions {
  /** Byte offset to start at (the start of a line, e.g. a previous `Line.end`). Default 0. */
  start?: number;
  /** Stop at this byte offset (a line that crosses it is still read whole). Default: the end of the file. */
  end?: number;
  /** Bytes per range read. Default 1 MiB. */
  chunkSize?: number;
  /** Also yield a last line that has no newline (`complete: false`). Default false: incremental readers resume there later. */
  includePartial?: boolean;
  /**
   * Yield only lines that contain one of these strings. They are found with `Buffer.indexOf` on the raw bytes, so the
   * other lines are never decoded: a metrics parser skims a 1 GB log of Ray and vLLM chatter at several hundred MB/s.
   */
  matching?: string[];
  /**
   * Ranges to read ahead while the caller works on the current one (default 0: read on demand). A reader that goes
   * through a whole large file sets it so reading overlaps parsing; one that stops early (a preview) does not.
   */
  readAhead?: number;
  /**
   * A line longer than this many bytes is not kept: it is yielded empty with `tooLong` and its byte span, having cost no
   * more memory than a chunk, so one 100 MB line in a data file cannot take hundreds of MB. Default: no limit.
   */
  maxLineBytes?: number;
  /**
   * Set as the reader goes: `end` is the byte offset just past the last complete line it has gone through, yielded or
   * not. With `matching`, an incremental reader resumes there rather than after the last line it was given, so the
   * lines without a marker (a verl log's Ray and vLLM output after its last step) are not read again on every poll.
   */
  progress?: { end: number };
  /**
   * Chunk buffers to read into, the caller's to keep from call to call: the reader takes them and gives them back when it
   * is done. A worker thread that reads a file range after range then allocates none after its first; it allocates
   * little else, so buffers of its own, freed only by a garbage collection, piled up to 60 MB in each such thread.
   */
  buffers?: Buffer[];
  signal?: AbortSignal;
}

/** One line as bytes: `buf[from, to)` (without the newline, and without a CR before it), with its byte span in the file. */
export interface LineBytes {
  buf: Buffer;
  from: number;
  to: number;
  start: number;
  end: number;
  complete: boolean;
  tooLong?: boolean;
}

/**
 * Whole lines one after another, as readLineRuns yields them: `buf[from, to)`, `to` just past the last one's newline
 * (CRs left in), the first holding a `matching` string; `start` and `end` are their byte span in the file.
 */
export interface LineRun {
  run: true;
  buf: Buffer;
  from: number;
  to: number;
  start: number;
  end: number;
}

/** A range being read, and the buffer it is read into. */
interface Pending {
  into: Buffer;
  data: Promise<Buffer>;
}

const NL = 0x0a;
const EMPTY = Buffer.alloc(0);
const CR = 0x0d;

/** Where the text of the line buf[from, nl) ends (`nl` at its newline, or its end): before a CR just ahead of it. */
export function lineTextEnd(buf: Buffer, from: number, nl: number): number {
  return nl > from && buf[nl - 1] === CR ? nl - 1 : nl;
}

/**
 * Reads a file on a host line by line from a byte offset, through range reads (`Host.readFile(path, {start, end})`), so a
 * 1 GB log or dump is never loaded whole and works the same over SFTP. Incremental readers keep the last `Line.end` and
 * call again from there when the file grows.
 */
export function readLines(host: Host, path: string, opts: ReadLinesOptions = {}): AsyncGenerator<Line> {
  return lines(host, path, opts, (buf, from, to, start, end, complete) => ({ text: buf.toString('utf8', from, to), start, end, complete }));
}

/**
 * readLines without decoding: each line's bytes inside the chunk that was read, valid until the next line is asked for
 * (chunk buffers are recycled: a reader going through a 1 GB log allocates a few buffers, not one per range).
 */
export function readLineBytes(host: Host, path: string, opts: ReadLinesOptions = {}): AsyncGenerator<LineBytes> {
  return lines(host, path, opts, (buf, from, to, start, end, complete) => ({ buf, from, to, start, end, complete }));
}

/**
 * readLineBytes for a reader that goes through many lines at once (a metrics parser's WebAssembly scanner): from each
 * line holding a `matching` string on, the rest of its chunk's whole lines come as one LineRun, which the reader must
 * take whole, skipping the lines without a marker itself. A line across two chunks, the first line of the file and a
 * last line without a newline come as LineBytes. Needs `matching`, and takes no `maxLineBytes`.
 */
export function readLineRuns(
  host: Host,
  path: string,
  opts: ReadLinesOptions & { matching: string[] },
): AsyncGenerator<LineBytes | LineRun> {
  if (opts.maxLineBytes !== undefined) throw new Error('readLineRuns: maxLineBytes is not supported');
  return lines<LineBytes | LineRun>(
    host,
    path,
    opts,
    (buf, from, to, start, end, complete) => ({ buf, from, to, start, end, complete }),
    (buf, from, to, start, end) => ({ run: true, buf, from, to, start, end }),
  );
}

/**
 * The reader behind them: `make` turns a line's bytes into what is yielded (one generator, one await per line). A chunk's
 * buffer is reused for a later range once the reader moves past it, so what the reader keeps longer (the unfinished
 * line at a chunk's end) is copied.
 */
async function* lines<T extends object>(
  host: Host,
  path: string,
  opts: ReadLinesOptions,
  makeLine: (buf: Buffer, from: number, to: number, start: number, end: number, complete: boolean) => T,
  makeRun?: (buf: Buffer, from: number, to: number, start: number, end: number) => T,
): AsyncGenerator<T> {
  // A UTF-8 byte order mark (Windows editors, Excel's "CSV UTF-8") is no part of the first line's text: with it the first
  // row of a JSONL file would not parse.
  const make = (buf: Buffer, from: number, to: number, start: number, end: number, complete: boolean): T =>
    start === 0 && to - from >= 3 && buf[from] === 0xef && buf[from + 1] === 0xbb && buf[from + 2] === 0xbf
      ? makeLine(buf, from + 3, to, start, end, complete)
      : makeLine(buf, from, to, start, end, complete);
  const chunkSize = opts.chunkSize ?? 1 << 20;
  const readAhead = opts.readAhead ?? 0;
  const stop = opts.end ?? Infinity;
  const maxLine = opts.maxLineBytes ?? Infinity;
  const skipped = (start: number, end: number, complete: boolean): T =>
    Object.assign(makeLine(EMPTY, 0, 0, start, end, complete), { tooLong: true as const });
  const needles = opts.matching?.map((s) => Buffer.from(s));
  const matches = (b: Buffer) => !needles || needles.some((n) => b.includes(n));
  /** Chunk buffers free to read into; a read that is under way holds its own. */
  const free: Buffer[] = opts.buffers ?? [];
  const read = (at: number): Pending => {
    const into = free.pop() ?? Buffer.allocUnsafe(chunkSize);
    const data = host.readFile(path, { start: at, end: at + chunkSize, into });
    // A range read ahead can fail (a dropped connection fails every read in flight) before its turn: its error is
    // thrown when the reader gets there, not reported as an unhandled rejection meanwhile.
    data.catch(() => undefined);
    return { into, data };
  };
  let pos = opts.start ?? 0;
  /** An unfinished line from earlier chunks, its length, and where it starts; `overLong`: its bytes are being skipped. */
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let carryStart = pos;
  let overLong = false;
  // Ranges being read ahead, in order, and where the next one starts. Only what may be needed is read ahead: a line
  // that crosses `end` is still read whole, on demand.
  const ahead: Pending[] = [];
  let readPos = pos;
  const fill = () => {
    while (ahead.length < readAhead && readPos < stop) {
      ahead.push(read(readPos));
      readPos += chunkSize;
    }
  };
  fill();
  /** The buffer of the chunk being read: free again once the caller asks for the line after its last one. */
  let current: Buffer | undefined;
  try {
    for (;;) {
      if (current) free.push(current);
      opts.signal?.throwIfAborted();
      let next: Pending;
      if (ahead.length) next = ahead.shift()!;
      else {
        next = read(readPos);
        readPos += chunkSize;
      }
      current = next.into;
      const chunk = await next.data;
      // A chunk read ahead is there already, and awaiting it would go straight on: give the event loop a turn first,
      // so ten big logs read side by side keep the extension host from its messages for one chunk at a time.
      await eventLoopTurn();
      const base = pos;
      pos += chunk.length;
      const eof = chunk.length < chunkSize;
      if (!eof) fill();
      let lineStart = 0;
      if (carry.length || overLong) {
        // The line that crosses into this chunk: joined from its pieces (the only copy the reader makes).
        const nl = chunk.indexOf(NL);
        if (nl === -1) {
          carryBytes += chunk.length;
          if (carryBytes > maxLine) [carry, overLong] = [[], true];
          else carry.push(Buffer.from(chunk));
          if (eof) break;
          continue;
        }
        if (overLong || carryBytes + nl > maxLine) {
          [carry, overLong] = [[], false];
          if (carryStart >= stop) return;
          yield skipped(carryStart, base + nl + 1, true);
        } else {
          const line = Buffer.concat([...carry, chunk.subarray(0, nl)]);
          carry = [];
          if (carryStart >= stop) return;
          const to = lineTextEnd(line, 0, line.length);
          if (matches(line)) yield make(line, 0, to, carryStart, base + nl + 1, true);
        }
        lineStart = nl + 1;
        if (base + lineStart >= stop) return;
      }
      if (needles) {
        // Next occurrence of each needle at or after lineStart (-1: none left in this chunk).
        const found = needles.map(() => -2);
        for (;;) {
          let m = -1;
          for (let k = 0; k < needles.length; k++) {
            let at = found[k]!;
            if (at !== -1 && at < lineStart) found[k] = at = chunk.indexOf(needles[k]!, lineStart);
            if (at !== -1 && (m === -1 || at < m)) m = at;
          }
          if (m === -1) {
            // No needle in the rest of the chunk; the unfinished last line is carried and checked once it is whole.
            lineStart = chunk.lastIndexOf(NL) + 1;
            break;
          }
          const ls = m === 0 ? 0 : chunk.lastIndexOf(NL, m - 1) + 1;
          if (base + ls >= stop) return;
          const nl = chunk.indexOf(NL, m);
          if (nl === -1) {
            lineStart = ls;
            break;
          }
          if (makeRun && base + ls > 0) {
            // This line and the rest of the chunk's whole lines that start before `stop`, to be read whole.
            const lastNl = chunk.lastIndexOf(NL);
            const cut = base + chunk.length > stop ? chunk.indexOf(NL, stop - base - 1) : -1;
            const runTo = (cut === -1 ? lastNl : Math.min(cut, lastNl)) + 1;
            yield makeRun(chunk, ls, runTo, base + ls, base + runTo);
            lineStart = runTo;
            continue;
          }
          const to = lineTextEnd(chunk, ls, nl);
          yield nl - ls > maxLine ? skipped(base + ls, base + nl + 1, true) : make(chunk, ls, to, base + ls, base + nl + 1, true);
          lineStart = nl + 1;
        }
      } else {
        for (let nl = chunk.indexOf(NL, lineStart); nl !== -1; nl = chunk.indexOf(NL, lineStart)) {
          if (base + lineStart >= stop) return;
          const to = lineTextEnd(chunk, lineStart, nl);
          yield nl - lineStart > maxLine
            ? skipped(base + lineStart, base + nl + 1, true)
            : make(chunk, lineStart, to, base + lineStart, base + nl + 1, true);
          lineStart = nl + 1;
        }
      }
      if (base + lineStart >= stop) return;
      // Every line of this chunk before lineStart has been yielded (and the caller has asked for the next) or skipped.
      if (opts.progress) opts.progress.end = base + lineStart;
      if (lineStart < chunk.length) {
        carryBytes = chunk.length - lineStart;
        carryStart = base + lineStart;
        if (carryBytes > maxLine) overLong = true;
        else carry = [Buffer.from(chunk.subarray(lineStart))];
      }
      if (eof) break;
    }
    if (overLong && opts.includePartial) yield skipped(carryStart, carryStart + carryBytes, false);
    else if (carry.length && opts.includePartial) {
      const last = Buffer.concat(carry);
      if (matches(last)) yield make(last, 0, last.length, carryStart, carryStart + last.length, false);
    }
  } finally {
    // A caller that stops early (or the end of the file) leaves ranges read ahead unused: wait for them so no read
    // outlives the reader. Their errors, if any, concern bytes nobody asked for.
    for (const p of ahead) await p.data.catch(() => undefined);
    if (opts.buffers) free.push(...(current ? [current] : []), ...ahead.map((p) => p.into));
  }
}
