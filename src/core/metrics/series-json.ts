import type { MetricSeries } from './metric-series';
import { notLogged, type Float64Column } from './float64-column';
import { BLOCK_ROWS } from './block-spill';
import { writeNumber } from './number-bytes';
import { JsonLinesWasm } from './json-lines';

/** Bytes per chunk: large enough that a write's fixed cost vanishes, small enough to stream a 1 GB output. */
const CHUNK = 1 << 20;
/**
 * The most bytes one value takes besides its key (String() of a double is at most 25 characters), and room for the up
 * to 3 bytes a key's last 32-bit word writes past its end.
 */
const VALUE_ROOM = 32;
/** The most bytes of the rows copied out of the columns at a time (fewer rows when there are many columns). */
const TILE_BYTES = 8 << 20;

/** `"NaN"`, `"Infinity"`, `"-Infinity"`: JSON has no such numbers (see JsonMetric). */
const NOT_FINITE = { nan: Buffer.from('"NaN"'), inf: Buffer.from('"Infinity"'), ninf: Buffer.from('"-Infinity"') };
const STEP = Buffer.from('{"step":');
const METRICS = Buffer.from(',"metrics":{');
const END = Buffer.from('}}\n');

/** Object keys that are array indices: JavaScript objects (so JSON.stringify) list them first, in ascending order. */
function isArrayIndex(k: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(k) && Number(k) < 2 ** 32 - 1;
}

/**
 * A series' columns in the order JSON.stringify lists an object's keys: array-index keys first, ascending, then the
 * others in the order they were first logged.
 */
export function jsonColumnOrder(series: MetricSeries): Array<[string, Float64Column]> {
  const entries = series.columnEntries();
  return [
    ...entries.filter(([k]) => isArrayIndex(k)).sort((a, b) => Number(a[0]) - Number(b[0])),
    ...entries.filter(([k]) => !isArrayIndex(k)),
  ];
}

/**
 * A series as JSON lines, one `{"step":N,"metrics":{...}}` per step in step order (what `medrl metrics --json` prints),
 * byte for byte what `JSON.stringify({ step, metrics: jsonMetrics(row.metrics) })` gives, in chunks of about 1 MB: a
 * 1 GB log's output is written column-wise from the series, with no object or string per step or value.
 */
export function* seriesJsonChunks(series: MetricSeries): Generator<Buffer> {
  const order = jsonColumnOrder(series);
  const format = new JsonLineFormat(order.map(([k]) => k));
  const tiles = new RowTiles(
    order.map(([, c]) => c),
    series.steps,
    tileRowsFor(order.length, TILE_BYTES),
  );
  let row = 0;
  while (row < series.length) {
    const buf = Buffer.allocUnsafe(Math.max(CHUNK, format.longestRow));
    let pos = 0;
    while (row < series.length && pos + format.longestRow <= buf.length) {
      const tile = tiles.load(row);
      const end = Math.min(tile.start + tile.rows, row + Math.floor((buf.length - pos) / format.longestRow));
      pos = format.write(buf, pos, tile, row, end);
      row = end;
    }
    yield buf.subarray(0, pos);
  }
}

/**
 * Rows per tile for `columns` columns within `bytes`: a power of two up to a block's rows, so a tile never spans two of a
 * column's blocks (each block is read once, even one spilled to disk).
 */
export function tileRowsFor(columns: number, bytes: number): number {
  let rows = BLOCK_ROWS;
  while (rows > 1 && rows * 8 * columns > bytes) rows >>= 1;
  return rows;
}

/**
 * Rows [start, start + rows) of every column, column after column (column c's row r at c × stride + r − start), and
 * the steps (row r's at steps[r]): what a JSON line is written from.
 */
export interface RowTile {
  start: number;
  rows: number;
  stride: number;
  values: Float64Array;
  words: Uint32Array;
  steps: ArrayLike<number>;
}

/**
 * Copies tiles of rows out of a series' columns, so the loop over a row's values reads one array instead of looking each
 * value up in its column's blocks (a lookup and a "logged?" check per value: about 5% of `--json`'s CPU time on a dense
 * log).
 */
export class RowTiles {
  private readonly tile: RowTile;
  private readonly length: number;

  constructor(
    private readonly columns: readonly Float64Column[],
    steps: readonly number[],
    tileRows: number,
  ) {
    const values = new Float64Array(tileRows * columns.length);
    this.tile = { start: 0, rows: 0, stride: tileRows, values, words: new Uint32Array(values.buffer), steps };
    this.length = steps.length;
  }

  /** The tile that holds `row` (the same object, refilled when `row` is past it). */
  load(row: number): RowTile {
    const t = this.tile;
    if (row >= t.start && row < t.start + t.rows) return t;
    t.start = row - (row % t.stride);
    t.rows = Math.min(t.stride, this.length - t.start);
    for (let c = 0; c < this.columns.length; c++) this.columns[c]!.copyRows(t.start, t.rows, t.words.subarray(c * t.stride * 2));
    return t;
  }
}

/**
 * Bytes as little-endian 32-bit words, the last one padded with zeros: written four bytes at a time, the padding lands
 * where the next bytes are written anyway.
 */
function words(b: Buffer): Int32Array {
  const w = new Int32Array(Math.ceil(b.length / 4));
  new Uint8Array(w.buffer).set(b);
  return w;
}

/**
 * Writes JSON lines from tiles of rows: in-process, or on the worker threads of series-json-workers.ts, which get the
 * keys and the tiles. The WebAssembly writer (json-lines.ts) writes them, about twice as fast as this file's loop; a row
 * with a value it leaves to String() is written here (a class, so the loops keep their locals in registers).
 */
export class JsonLineFormat {
  /** `,"key":` per column, as words; `keyWordsBare` without the comma (a line's first key). */
  private readonly keyWords: Int32Array[];
  private readonly keyWordsBare: Int32Array[];
  private readonly keyLengths: Int32Array;
  private readonly wasm: JsonLinesWasm | undefined;
  /** The most bytes one row can take: a buffer with this much room left holds the next row. */
  readonly longestRow: number;

  /** `opts.wasm: false`: every row written here (the WebAssembly writer's baseline in tests and benchmarks). */
  constructor(keysInOrder: readonly string[], opts: { wasm?: boolean } = {}) {
    const keys = keysInOrder.map((k) => Buffer.from(`,${JSON.stringify(k)}:`));
    this.keyWords = keys.map(words);
    this.keyWordsBare = keys.map((k) => words(k.subarray(1)));
    this.keyLengths = Int32Array.from(keys, (k) => k.length);
    this.longestRow = STEP.length + METRICS.length + END.length + VALUE_ROOM * (1 + keys.length) + keys.reduce((n, k) => n + k.length, 0);
    this.wasm = opts.wasm === false ? undefined : new JsonLinesWasm(keys, this.longestRow);
  }

  /** Writes rows [from, to) of `tile` at buf[pos] (the caller leaves longestRow bytes a row); returns the index past them. */
  write(buf: Buffer, pos: number, tile: RowTile, from: number, to: number): number {
    if (!this.wasm) return this.writeHere(buf, pos, tile, from, to);
    return this.wasm.write(buf, pos, tile, from, to, (at, row) => this.writeHere(buf, at, tile, row, row + 1));
  }

  private writeHere(buf: Buffer, pos: number, tile: RowTile, from: number, to: number): number {
    const { keyWords, keyWordsBare, keyLengths } = this;
    const { values, words: tileWords, stride, steps, start } = tile;
    const nCols = keyWords.length;
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.length);
    for (let row = from; row < to; row++) {
      pos = copy(STEP, buf, pos);
      pos = writeNumber(buf, pos, steps[row]!);
      pos = copy(METRICS, buf, pos);
      let first = 1;
      for (let c = 0, at = row - start; c < nCols; c++, at += stride) {
        const v = values[at]!;
        // A row not logged reads as NaN: only a NaN needs the second look that tells it from a logged NaN.
        if (v !== v && notLogged(tileWords, 2 * at)) continue;
        const kw = first ? keyWordsBare[c]! : keyWords[c]!;
        for (let j = 0; j < kw.length; j++) dv.setInt32(pos + 4 * j, kw[j]!, true);
        pos += keyLengths[c]! - first;
        first = 0;
        if (v - v === 0) pos = writeNumber(buf, pos, v);
        else pos = copy(v !== v ? NOT_FINITE.nan : v > 0 ? NOT_FINITE.inf : NOT_FINITE.ninf, buf, pos);
      }
      pos = copy(END, buf, pos);
    }
    return pos;
  }
}

/** src into dst at pos; returns the index past it. */
function copy(src: Buffer, dst: Buffer, pos: number): number {
  for (let i = 0; i < src.length; i++) dst[pos++] = src[i]!;
  return pos;
}
