import type { DatasetReader } from './dataset-reader';

interface SearchBatch {
  matches: { index: number; snippet: string }[];
  /** Rows read so far. */
  scanned: number;
}

/** Every string in a value, depth first (what a person searches: the text, not the JSON around it). */
function* strings(v: unknown): Generator<string> {
  if (typeof v === 'string') yield v;
  else if (typeof v === 'number' || typeof v === 'boolean') yield String(v);
  else if (Array.isArray(v)) for (const x of v) yield* strings(x);
  else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) yield* strings(x);
}

/**
 * Streams the rows of a dataset that contain `query` (case-insensitive, in any text or number, or in a malformed line's
 * error), in batches so a caller can show them as they come; stops at `maxMatches` or when `signal` aborts.
 */
export async function* searchDataset(
  reader: DatasetReader,
  query: string,
  opts: { signal?: AbortSignal; maxMatches?: number; batchRows?: number } = {},
): AsyncGenerator<SearchBatch> {
  const q = query.toLowerCase();
  const maxMatches = opts.maxMatches ?? 1000;
  const batchRows = opts.batchRows ?? 5000;
  let batch: SearchBatch['matches'] = [];
  let scanned = 0;
  let found = 0;
  for await (const rec of reader.rows({ signal: opts.signal })) {
    scanned++;
    const texts = rec.error !== undefined ? [rec.error] : [...(rec.key !== undefined ? [rec.key] : []), ...strings(rec.value)];
    for (const t of texts) {
      const at = t.toLowerCase().indexOf(q);
      if (at === -1) continue;
      const from = Math.max(0, at - 60);
      const snippet = `${from > 0 ? '…' : ''}${t.slice(from, at + q.length + 60).replace(/\s+/g, ' ')}${at + q.length + 60 < t.length ? '…' : ''}`;
      batch.push({ index: rec.index, snippet });
      found++;
      break;
    }
    if (found >= maxMatches) break;
    if (scanned % batchRows === 0 || batch.length >= 50) {
      yield { matches: batch, scanned };
      batch = [];
    }
  }
  yield { matches: batch, scanned };
}
