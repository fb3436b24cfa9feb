import type { Host } from '../remote/host';
import type { DatasetReader } from '../datasets/dataset-reader';
import { openDataset } from '../datasets/open-dataset';
import { errorMessage } from '../errors/located-error';
import { findPhi } from './find-phi';
import type { PhiCategory, PhiCounts } from './phi-categories';
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

export function countFinding(summary: PhiSummary, category: PhiCategory): void {
  summary.counts[category] = (summary.counts[category] ?? 0) + 1;
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
  for await (const rec of reader.rows({ signal: opts.signal })) {
    summary.rows++;
    // Parquet has no lines: its 1-based row stands in.
    const line = reader.format === 'parquet' ? rec.index + 1 : (rec.line ?? rec.index + 1);
    if (rec.error !== undefined) {
      summary.unreadable++;
      opts.onUnreadable?.(hideQuotedText(rec.error));
      continue;
    }
    const hits = hitsIn(rec.value, line);
    if (!hits.length) continue;
    for (const hit of hits) countFinding(summary, hit.category);
    yield hits;
  }
}

/** Every PHI finding in every string of one row's value, in order, into `out`. */
export function hitsIn(value: unknown, line: number, out: PhiHit[] = []): PhiHit[] {
  for (const { field, text } of stringsIn(value))
    for (const f of findPhi(text))
      out.push({ line, field: field || '(row)', category: f.category, text: text.slice(f.start, f.end), start: f.start, end: f.end });
  return out;
}
