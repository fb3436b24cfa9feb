import type { MetricSeries } from './metric-series';
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
  const entries = series.columnEntries();
  const cols = [
    ...entries.filter(([k]) => isArrayIndex(k)).sort((a, b) => Number(a[0]) - Number(b[0])),
    ...entries.filter(([k]) => !isArrayIndex(k)),
  ];
  // `,"key":` per metric; the first one written on a line skips its comma.
  const keys = cols.map(([k]) => Buffer.from(`,${JSON.stringify(k)}:`));
  const columns = cols.map(([, c]) => c);
  const steps = series.steps;
  let buf = Buffer.allocUnsafe(CHUNK);
  let pos = 0;
  const put = (b: Buffer, from = 0) => {
    for (let i = from; i < b.length; i++) buf[pos++] = b[i]!;
  };
  for (let row = 0; row < steps.length; row++) {
    if (pos + STEP.length + METRICS.length + VALUE_ROOM > buf.length) {
      yield buf.subarray(0, pos);
      buf = Buffer.allocUnsafe(CHUNK);
      pos = 0;
    }
    put(STEP);
    pos = writeNumber(buf, pos, steps[row]!);
    put(METRICS);
    let first = true;
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c]!;
      if (!col.has(row)) continue;
      const key = keys[c]!;
      if (pos + key.length + VALUE_ROOM > buf.length) {
        yield buf.subarray(0, pos);
        buf = Buffer.allocUnsafe(Math.max(CHUNK, key.length + VALUE_ROOM + END.length));
        pos = 0;
      }
      put(key, first ? 1 : 0);
      first = false;
      const v = col.get(row);
      if (Number.isFinite(v)) pos = writeNumber(buf, pos, v);
      else put(Number.isNaN(v) ? NOT_FINITE.nan : v > 0 ? NOT_FINITE.inf : NOT_FINITE.ninf);
    }
    if (pos + END.length > buf.length) {
      yield buf.subarray(0, pos);
      buf = Buffer.allocUnsafe(CHUNK);
      pos = 0;
    }
    put(END);
  }
  if (pos > 0) yield buf.subarray(0, pos);
}
