import { writePow5Table } from './decimal-bytes';
import { JSON_LINES_WASM } from './json-lines-wasm';
import type { RowTile } from './series-json';

/**
 * The WebAssembly writer of `medrl metrics --json`'s lines (wasm/json-lines.ts): what series-json.ts's JsonLineFormat
 * writes in JavaScript, byte for byte, at 2.0-2.3x its speed in one thread (a dense 128 MB log on the dev machine: 339-482
 * against 167-211 MB of JSON a second). JsonLineFormat hands it rows of a tile; a row with a value it leaves to String()
 * is handed back, and JsonLineFormat writes that row itself.
 */
interface Exports {
  init(columns: number, keyBytes: number, rows: number, outBytes: number): void;
  pow5Table(): number;
  keyAt(): number;
  keyLengths(): number;
  keys(): number;
  steps(): number;
  values(): number;
  out(): number;
  outLength(): number;
  writeRows(columns: number, first: number, n: number, stride: number): number;
  memory: WebAssembly.Memory;
}

/** Output bytes of one call at most: the rows of a call are as many as fit (at most MAX_ROWS). */
const OUT_BYTES = 1 << 20;
const MAX_ROWS = 4096;

let compiled: WebAssembly.Module | undefined;

export class JsonLinesWasm {
  private readonly x: Exports;
  private readonly columns: number;
  private readonly rows: number;
  private readonly steps: Float64Array;
  private readonly values: Uint32Array;
  private readonly out: Uint8Array;

  /** `keys`: each column's `,"key":` bytes, in order; `longestRow`: the most bytes a row can take. */
  constructor(keys: readonly Uint8Array[], longestRow: number) {
    compiled ??= new WebAssembly.Module(Buffer.from(JSON_LINES_WASM, 'base64'));
    this.x = new WebAssembly.Instance(compiled, { env: { abort: moduleAbort } }).exports as unknown as Exports;
    this.columns = keys.length;
    this.rows = Math.max(1, Math.min(MAX_ROWS, Math.floor(OUT_BYTES / longestRow)));
    const keyBytes = keys.reduce((n, k) => n + k.length, 0);
    this.x.init(this.columns, keyBytes, this.rows, this.rows * longestRow);
    const buf = this.x.memory.buffer;
    const keyAt = new Int32Array(buf, this.x.keyAt(), this.columns);
    const keyLen = new Int32Array(buf, this.x.keyLengths(), this.columns);
    const bytes = new Uint8Array(buf, this.x.keys(), keyBytes);
    for (let c = 0, at = 0; c < this.columns; at += keys[c]!.length, c++) {
      keyAt[c] = at;
      keyLen[c] = keys[c]!.length;
      bytes.set(keys[c]!, at);
    }
    writePow5Table(buf, this.x.pow5Table());
    this.steps = new Float64Array(buf, this.x.steps(), this.rows);
    this.values = new Uint32Array(buf, this.x.values(), this.rows * this.columns * 2);
    this.out = new Uint8Array(buf, this.x.out(), this.rows * longestRow);
  }

  /**
   * Writes rows [from, to) of `tile` at buf[pos] (longestRow bytes of room a row) and returns the index past them; a row
   * this writer leaves to String() is written by `writeRow(pos, row)` (which returns the index past it).
   */
  write(buf: Uint8Array, pos: number, tile: RowTile, from: number, to: number, writeRow: (pos: number, row: number) => number): number {
    const { columns, values, steps, out } = this;
    for (let row = from; row < to;) {
      const n = Math.min(this.rows, to - row);
      // Each column's words for these rows, column after column (the tile's stride is its own).
      for (let c = 0, at = (row - tile.start) * 2; c < columns; c++, at += tile.stride * 2)
        values.set(tile.words.subarray(at, at + n * 2), c * n * 2);
      for (let i = 0; i < n; i++) steps[i] = tile.steps[row + i]!;
      for (let first = 0; first < n;) {
        const done = this.x.writeRows(columns, first, n, n);
        const len = this.x.outLength();
        buf.set(out.subarray(0, len), pos);
        pos += len;
        if (done < n) pos = writeRow(pos, row + done);
        first = done + 1;
      }
      row += n;
    }
    return pos;
  }
}

function moduleAbort(): never {
  throw new Error('the JSON line writer (WebAssembly) stopped on an internal check');
}
