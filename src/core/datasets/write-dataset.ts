import { extname, join } from 'node:path';
import type { Host } from '../remote/host';
import type { ConvertResult } from './convert-dataset';
import { rowsToJsonl, rowsToParquet } from './parquet-rows';

export type OutputFileFormat = 'parquet' | 'jsonl' | 'json';

interface WriteOptions {
  /** A file (no split), or a folder that gets `train.EXT` and `test.EXT` (split). */
  out: string;
  split: boolean;
  /** File format for a split into a folder; a single file takes its extension's. Default parquet. */
  fileFormat?: OutputFileFormat;
  /** Also write each parquet file's rows as JSON lines beside it (`train.jsonl` next to `train.parquet`). */
  jsonlTwin?: boolean;
}

/** The bytes of rows in a file format. */
function encodeRows(rows: Record<string, unknown>[], format: OutputFileFormat): Uint8Array | string {
  if (format === 'parquet') return rowsToParquet(rows);
  if (format === 'jsonl') return rowsToJsonl(rows);
  return `${JSON.stringify(rows, null, 1)}\n`;
}

function formatOf(path: string): OutputFileFormat {
  const ext = extname(path).toLowerCase().slice(1);
  if (ext === 'parquet' || ext === 'jsonl' || ext === 'json') return ext;
  throw new Error(`${path}: the output must end in .parquet, .jsonl or .json`);
}

/** Writes converted rows on a host (local or remote through Host.writeFile); returns the files written. */
export async function writeConverted(host: Host, result: ConvertResult, opts: WriteOptions): Promise<string[]> {
  const files: { path: string; rows: Record<string, unknown>[] }[] = opts.split
    ? [
        { path: join(opts.out, `train.${opts.fileFormat ?? 'parquet'}`), rows: result.train },
        { path: join(opts.out, `test.${opts.fileFormat ?? 'parquet'}`), rows: result.test },
      ]
    : [{ path: opts.out, rows: [...result.train, ...result.test] }];
  const written: string[] = [];
  for (const f of files) {
    const format = formatOf(f.path);
    await host.writeFile(f.path, encodeRows(f.rows, format));
    written.push(f.path);
    if (opts.jsonlTwin && format === 'parquet') {
      const twin = f.path.replace(/\.parquet$/i, '.jsonl');
      await host.writeFile(twin, rowsToJsonl(f.rows));
      written.push(twin);
    }
  }
  return written;
}
