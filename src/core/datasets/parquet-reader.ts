import { parquetReadObjects } from 'hyparquet';
import { openParquetFile, parquetWhy } from '../io/parquet-file';
import type { Host } from '../remote/host';
import type { DatasetReader, DatasetRecord, RowsOptions } from './dataset-reader';

/**
 * The first read in a row group decodes this many rows (a preview fetches only the pages holding them); the next read takes
 * the rest of the group at once, since each read decodes its column chunks from their first needed page.
 */
const FIRST_BATCH_ROWS = 1000;

/** Opens a parquet dataset by reading its footer only (the last 512 KiB at most); rows are read per row group on demand. */
export async function openParquetDataset(host: Host, path: string, size: number): Promise<DatasetReader> {
  const { file, metadata, columns } = await openParquetFile(host, path, size);
  return {
    host,
    path,
    format: 'parquet',
    size,
    knownRowCount: Number(metadata.num_rows),
    declaredColumns: columns,
    async *rows(opts: RowsOptions = {}): AsyncGenerator<DatasetRecord> {
      const start = opts.start ?? 0;
      let groupStart = 0;
      for (const [g, group] of metadata.row_groups.entries()) {
        const groupEnd = groupStart + Number(group.num_rows);
        for (let s = Math.max(start, groupStart), first = true; s < groupEnd; first = false) {
          opts.signal?.throwIfAborted();
          const e = first ? Math.min(groupEnd, s + FIRST_BATCH_ROWS) : groupEnd;
          let objects: Record<string, unknown>[];
          try {
            objects = await parquetReadObjects({ file, metadata, rowStart: s, rowEnd: e });
          } catch (err) {
            // A damaged row group loses its own rows only: one record says which (a record per row of a group that
            // claims millions kept a reader busy for minutes), and reading goes on with the next group.
            const why = parquetWhy(err);
            const offset = Number(group.columns[0]?.meta_data?.data_page_offset ?? 0);
            yield { index: s, error: `row group ${g} (rows ${s}-${groupEnd - 1}, byte offset ${offset}): cannot decode: ${why}` };
            break;
          }
          for (const [i, value] of objects.entries()) yield { index: s + i, value: plain(value) };
          s = e;
        }
        groupStart = groupEnd;
      }
    },
  };
}

/** Parquet values as JSON-like values: INT64 as numbers (strings beyond 2^53), bytes as base64, dates as ISO strings. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return v;
}
