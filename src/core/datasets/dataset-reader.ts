import { extname } from 'node:path';
import type { Host } from '../remote/host';

export type DatasetFormat = 'json' | 'jsonl' | 'parquet' | 'csv';

const DATASET_FORMATS: readonly DatasetFormat[] = ['json', 'jsonl', 'parquet', 'csv'];

/** One row of a dataset as read: its value, or why it could not be read (a malformed line), and where it is in the file. */
export interface DatasetRecord {
  /** 0-based row number (malformed rows count, so later rows keep their numbers). */
  index: number;
  /** 1-based line of the row's first character (JSON, JSONL, CSV). */
  line?: number;
  /** Byte offset of the row's first byte (JSONL). */
  offset?: number;
  /** The key of the row in a JSON object keyed by id (PubMedQA) or the name of its array in an object of arrays. */
  key?: string;
  value?: unknown;
  /** Set when the row could not be read; `value` is then absent. */
  error?: string;
}

export interface RowsOptions {
  /** First row to yield (0-based). */
  start?: number;
  signal?: AbortSignal;
}

/** A dataset file on a host, read through range reads (`Host.readFile(path, {start, end})`). */
export interface DatasetReader {
  readonly host: Host;
  readonly path: string;
  readonly format: DatasetFormat;
  readonly size: number;
  /** Row count when the file says it without a scan (parquet footer), else undefined. */
  readonly knownRowCount?: number;
  /** Column names when the file declares them (parquet schema, CSV header). */
  readonly declaredColumns?: string[];
  rows(opts?: RowsOptions): AsyncGenerator<DatasetRecord>;
}

export function datasetFormatOf(path: string): DatasetFormat | undefined {
  const ext = extname(path).toLowerCase().slice(1);
  return (DATASET_FORMATS as readonly string[]).includes(ext) ? (ext as DatasetFormat) : undefined;
}

/** The first `count` rows from row `start`. */
export async function readRows(reader: DatasetReader, start: number, count: number, signal?: AbortSignal): Promise<DatasetRecord[]> {
  const out: DatasetRecord[] = [];
  if (count <= 0) return out;
  for await (const r of reader.rows({ start, signal })) {
    out.push(r);
    if (out.length >= count) break;
  }
  return out;
}
