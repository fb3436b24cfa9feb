import type { MetricSeries } from './metric-series';
import type { Float64Column } from './float64-column';
import { writeNumber } from './number-bytes';

/** Bytes per chunk: large enough that a write's fixed cost vanishes, small enough to stream a 1 GB output. */
const CHUNK = 1 << 20;
/** The most bytes one value takes besides its key (String() of a double is at most 25 characters). */
const VALUE_ROOM = 32;

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

/** Writes a series' rows into buffers (a class, not the generator, so its loops keep their locals in registers). */
class JsonLinesWriter {
  private readonly keys: Buffer[];
  private readonly columns: Float64Column[];
  private readonly steps: number[];
  private row = 0;
  /** The most bytes one row can take, so that every buffer holds at least one. */
  readonly longestRow: number;

  constructor(series: MetricSeries) {
    const entries = series.columnEntries();
    const cols = [
      ...entries.filter(([k]) => isArrayIndex(k)).sort((a, b) => Number(a[0]) - Number(b[0])),
      ...entries.filter(([k]) => !isArrayIndex(k)),
    ];
    // `,"key":` per metric; the first one written on a line skips its comma.
    this.keys = cols.map(([k]) => Buffer.from(`,${JSON.stringify(k)}:`));
    this.columns = cols.map(([, c]) => c);
    this.steps = series.steps;
    this.longestRow =
      STEP.length + METRICS.length + END.length + VALUE_ROOM * (1 + cols.length) + this.keys.reduce((n, k) => n + k.length, 0);
  }

  get done(): boolean {
    return this.row >= this.steps.length;
  }

  /** Writes whole rows into buf while the longest row still fits; returns the bytes written. */
  fill(buf: Buffer): number {
    const { keys, columns, steps, longestRow } = this;
    const nCols = columns.length;
    let pos = 0;
    let row = this.row;
    for (; row < steps.length && pos + longestRow <= buf.length; row++) {
      pos = copy(STEP, 0, buf, pos);
      pos = writeNumber(buf, pos, steps[row]!);
      pos = copy(METRICS, 0, buf, pos);
      let first = 1;
      for (let c = 0; c < nCols; c++) {
        const col = columns[c]!;
        if (!col.has(row)) continue;
        pos = copy(keys[c]!, first, buf, pos);
        first = 0;
        const v = col.get(row);
        if (v - v === 0) pos = writeNumber(buf, pos, v);
        else pos = copy(v !== v ? NOT_FINITE.nan : v > 0 ? NOT_FINITE.inf : NOT_FINITE.ninf, 0, buf, pos);
      }
      pos = copy(END, 0, buf, pos);
    }
    this.row = row;
    return pos;
  }
}

/** src[from..] into dst at pos; returns the index past it. */
function copy(src: Buffer, from: number, dst: Buffer, pos: number): number {
  for (let i = from; i < src.length; i++) dst[pos++] = src[i]!;
  return pos;
}
