import type { Host } from '../remote/host';
import type { DatasetReader } from '../datasets/dataset-reader';
import { openDataset } from '../datasets/open-dataset';
import { errorMessage } from '../errors/located-error';
import { findPhi } from './find-phi';
import type { PhiCategory, PhiCounts, PhiFinding } from './phi-categories';
import { stringsIn } from './value-strings';

/** One identifier found in a dataset: where (1-based line, or row for parquet; field path) and what. */
export interface PhiHit {
  line: number;
  field: string;
  category: PhiCategory;
  text: string;
  /** UTF-16 offsets into the field's string. */
  start: number;
  end: number;
  /** Found in the field's name (an object key, or a CSV column name in the header), not in its value. */
  key?: true;
}

/** What a scan or a redaction went through: counts only, never the text found. */
export interface PhiSummary {
  rows: number;
  /** Rows that could not be read (malformed), so were not scanned. */
  unreadable: number;
  counts: PhiCounts;
}

export function newPhiSummary(): PhiSummary {
  return { rows: 0, unreadable: 0, counts: {} };
}

/** Counts `n` findings of `category` (one, or a worker thread's range's count) into `summary`. */
export function countFinding(summary: PhiSummary, category: PhiCategory, n = 1): void {
  summary.counts[category] = (summary.counts[category] ?? 0) + n;
}

/**
 * A reader's or parser's message with quoted text cut out: V8's JSON errors and csv-parse quote the row they failed on
 * (`"{"note": "call 555-…"}" is not valid JSON`), and a PHI tool must not print what it was meant to find.
 */
export function hideQuotedText(message: string): string {
  return message.replace(/"[\s\S]*"/, '"…"');
}

/** openDataset, with errors that say where without quoting the file's text. */
export async function openDatasetForPhi(host: Host, path: string): Promise<DatasetReader> {
  try {
    return await openDataset(host, path);
  } catch (err) {
    throw new Error(hideQuotedText(errorMessage(err)));
  }
}

export interface ScanOptions {
  signal?: AbortSignal;
  /** A row that could not be read: where and why (quoted text hidden). */
  onUnreadable?(problem: string): void;
}

/**
 * Every PHI finding in every string of every row, in file order, streamed from the dataset's reader (JSONL, CSV and
 * parquet are read in ranges, never whole), counting into `summary` as it goes. verl rollout dumps and TRL completions
 * files are JSONL and parquet, so they are read the same way. Yielded a row's findings at a time (rows without any are
 * not yielded): a step of an async generator per finding cost a sixth of a scan that reports many.
 */
export async function* scanDataset(reader: DatasetReader, summary: PhiSummary, opts: ScanOptions = {}): AsyncGenerator<PhiHit[]> {
  // JSON rows carry their own keys. A CSV's are its header, read once; parquet's are its schema (docs/phi.md).
  const keys = reader.format === 'jsonl' || reader.format === 'json' ? new CleanKeys() : undefined;
  if (reader.format === 'csv') {
    const header: PhiHit[] = [];
    for (const [i, column] of (reader.declaredColumns ?? []).entries()) hitsInKey(column, 1, fieldName(column, i), header);
    if (header.length) yield counted(summary, header);
  }
  let rowKey: string | undefined;
  for await (const rec of reader.rows({ signal: opts.signal })) {
    summary.rows++;
    // Parquet has no lines: its 1-based row stands in.
    const line = reader.format === 'parquet' ? rec.index + 1 : (rec.line ?? rec.index + 1);
    if (rec.error !== undefined) {
      summary.unreadable++;
      opts.onUnreadable?.(hideQuotedText(rec.error));
      continue;
    }
    const hits: PhiHit[] = [];
    // A JSON file's top-level key (a row's id, or the name of an array of rows) is scanned at the first row under it.
    if (rec.key !== undefined && rec.key !== rowKey) hitsInKey(rec.key, line, '(row key)', hits);
    rowKey = rec.key;
    hitsIn(rec.value, line, keys, hits);
    if (hits.length) yield counted(summary, hits);
  }
}

function counted(summary: PhiSummary, hits: PhiHit[]): PhiHit[] {
  for (const hit of hits) countFinding(summary, hit.category);
  return hits;
}

/**
 * Object keys a scan found nothing in. Rows repeat their field names, and the detector costs about 2 µs even on a short
 * key. Only keys without findings are kept, few, and only for one scan.
 */
export class CleanKeys {
  private readonly seen = new Set<string>();

  /** The findings in `key`, or none if it was found clean before in this scan. */
  findings(key: string): PhiFinding[] {
    if (this.seen.has(key)) return [];
    const found = findPhi(key);
    if (!found.length && this.seen.size < MAX_CLEAN_KEYS) this.seen.add(key);
    return found;
  }
}

const MAX_CLEAN_KEYS = 4096;

/** Every PHI finding in every string of one row's value (and in its object keys, given `keys`), in order, into `out`. */
export function hitsIn(value: unknown, line: number, keys?: CleanKeys, out: PhiHit[] = []): PhiHit[] {
  for (const { field, text, key } of stringsIn(value, keys !== undefined))
    addHits(out, key ? keys!.findings(text) : findPhi(text), text, line, field || '(row)', key);
  return out;
}

/** The findings in a name (a CSV column's, a JSON file's row key), as found in a key, into `out`. */
function hitsInKey(text: string, line: number, field: string, out: PhiHit[]): void {
  addHits(out, findPhi(text), text, line, field, true);
}

function addHits(out: PhiHit[], found: PhiFinding[], text: string, line: number, field: string, key: true | undefined): void {
  for (const f of found) {
    const hit: PhiHit = { line, field, category: f.category, text: text.slice(f.start, f.end), start: f.start, end: f.end };
    if (key) hit.key = key;
    out.push(hit);
  }
}

/** A CSV column's name as a field path; an empty header cell by its 1-based place. */
function fieldName(column: string, i: number): string {
  return column || `(column ${i + 1})`;
}
