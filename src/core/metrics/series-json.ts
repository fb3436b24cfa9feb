import type { MetricSeries } from './metric-series';
import { notLogged, type Float64Column } from './float64-column';
import { BLOCK_ROWS } from './block-spill';
import { writeNumber } from './number-bytes';

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
 * A series as JSON lines, one `{"step":N,"metrics":{...}}` per step in step order (what `medrl metrics --json` prints),
 * byte for byte what `JSON.stringify({ step, metrics: jsonMetrics(row.metrics) })` gives, in chunks of about 1 MB: a
 * 1 GB log's output is written column-wise from the series, with no object or string per step or value.
 */
export function* seriesJsonChunks(series: MetricSeries): Generator<Buffer> {
  const w = new JsonLinesWriter(series);
  while (!w.done) {
    const buf = Buffer.allocUnsafe(Math.max(CHUNK, w.longestRow));
    yield buf.subarray(0, w.fill(buf));
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
 * Writes a series' rows into buffers (a class, not the generator, so its loops keep their locals in registers). Rows are
 * read a tile at a time: each column's words for the tile's rows are copied into one array, column after column, so the
 * loop over a row's values reads that array instead of looking each value up in its column's blocks (a lookup and a
 * "logged?" check per value: about 5% of `--json`'s CPU time on a dense log).
 */
class JsonLinesWriter {
  /** `,"key":` per column, as words; `keyWordsBare` without the comma (a line's first key). */
  private readonly keyWords: Int32Array[];
  private readonly keyWordsBare: Int32Array[];
  private readonly keyLengths: Int32Array;
  private readonly columns: Float64Column[];
  private readonly steps: number[];
  /** Rows per tile: a power of two, so a tile never spans two of a column's blocks. */
  private readonly tileRows: number;
  /** Column c's values for rows [tileStart, tileEnd) at c × tileRows on, and their words. */
  private readonly tile: Float64Array;
  private readonly tileWords: Uint32Array;
  private tileStart = 0;
  private tileEnd = 0;
  private row = 0;
  /** The most bytes one row can take, so that every buffer holds at least one. */
  readonly longestRow: number;

  constructor(series: MetricSeries) {
    const entries = series.columnEntries();
    const cols = [
      ...entries.filter(([k]) => isArrayIndex(k)).sort((a, b) => Number(a[0]) - Number(b[0])),
      ...entries.filter(([k]) => !isArrayIndex(k)),
    ];
    const keys = cols.map(([k]) => Buffer.from(`,${JSON.stringify(k)}:`));
    this.keyWords = keys.map(words);
    this.keyWordsBare = keys.map((k) => words(k.subarray(1)));
    this.keyLengths = Int32Array.from(keys, (k) => k.length);
    this.columns = cols.map(([, c]) => c);
    this.steps = series.steps;
    this.longestRow = STEP.length + METRICS.length + END.length + VALUE_ROOM * (1 + cols.length) + keys.reduce((n, k) => n + k.length, 0);
    let rows = BLOCK_ROWS;
    while (rows > 1 && rows * 8 * cols.length > TILE_BYTES) rows >>= 1;
    this.tileRows = rows;
    this.tile = new Float64Array(rows * cols.length);
    this.tileWords = new Uint32Array(this.tile.buffer);
  }

  get done(): boolean {
    return this.row >= this.steps.length;
  }

  /** Copies every column's words for the tile of rows that holds `row`. */
  private loadTile(row: number): void {
    const { tileRows, tileWords, columns } = this;
    const start = row - (row % tileRows);
    const count = Math.min(tileRows, this.steps.length - start);
    for (let c = 0; c < columns.length; c++) columns[c]!.copyRows(start, count, tileWords.subarray(c * tileRows * 2));
    this.tileStart = start;
    this.tileEnd = start + count;
  }

  /** Writes whole rows into buf while the longest row still fits; returns the bytes written. */
  fill(buf: Buffer): number {
    const { keyWords, keyWordsBare, keyLengths, steps, longestRow, tile, tileWords, tileRows } = this;
    const nCols = this.columns.length;
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.length);
    let pos = 0;
    let row = this.row;
    for (; row < steps.length && pos + longestRow <= buf.length; row++) {
      if (row >= this.tileEnd) this.loadTile(row);
      pos = copy(STEP, buf, pos);
      pos = writeNumber(buf, pos, steps[row]!);
      pos = copy(METRICS, buf, pos);
      let first = 1;
      for (let c = 0, at = row - this.tileStart; c < nCols; c++, at += tileRows) {
        const v = tile[at]!;
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
    this.row = row;
    return pos;
  }
}

/** src into dst at pos; returns the index past it. */
function copy(src: Buffer, dst: Buffer, pos: number): number {
  for (let i = 0; i < src.length; i++) dst[pos++] = src[i]!;
  return pos;
}
