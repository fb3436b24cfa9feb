import { parquetMetadataAsync, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import type { Host } from '../remote/host';
import { errorMessage } from '../errors/located-error';
import { hostAsyncBuffer } from './host-async-buffer';

/*
 * The one way a parquet file is opened (datasets, episodes, reward samples): its footer is read and believed only as far
 * as the file's size and its column chunks bear it out. A 21 KB file whose footer claimed 200 million rows made every
 * reader allocate for them (minutes of work, or out of memory); a damaged footer failed with JavaScript's own words.
 */

/**
 * Rows a row group may claim per byte of its column chunks (as stored). pyarrow's densest pages, all nulls or one repeated
 * value, hold 20,000 rows behind a header of some 20 bytes; a footer that claims more is not believed.
 */
const MAX_ROWS_PER_BYTE = 1024;

export interface ParquetFile {
  file: AsyncBuffer;
  metadata: FileMetaData;
  /** Top-level column names of the schema. */
  columns: string[];
}

/** Opens a parquet file on a host and checks its footer (throws a plain error naming the file and what is wrong). */
export async function openParquetFile(host: Host, path: string, knownSize?: number): Promise<ParquetFile> {
  const where = `${host.name}:${path}`;
  const file = await hostAsyncBuffer(host, path, knownSize);
  const size = file.byteLength;
  if (size < 12) throw new Error(`${where}: not a parquet file: ${size} bytes is shorter than the header and footer (truncated?)`);
  let metadata: FileMetaData;
  let columns: string[];
  try {
    metadata = await parquetMetadataAsync(file);
    columns = parquetSchema(metadata).children.map((c) => c.element.name);
  } catch (err) {
    throw new Error(
      `${where}: cannot read the parquet footer at byte offset ${size - 8} of ${size} (the file is truncated or not parquet): ${parquetWhy(err)}`,
      { cause: err },
    );
  }
  const wrong = footerProblem(metadata, size);
  if (wrong) throw new Error(`${where}: the parquet footer is not believable (${wrong}): the file is damaged or forged`);
  return { file, metadata, columns };
}

/**
 * What a parquet reader threw, in plain words: hyparquet's own errors say what they found; JavaScript's (a TypeError or
 * RangeError from bytes that are not what the footer says they are) say nothing a user can act on.
 */
export function parquetWhy(err: unknown): string {
  if (err instanceof TypeError || err instanceof RangeError) return 'its bytes are not what the parquet format allows there (damaged)';
  return errorMessage(err);
}

/** Why the footer cannot be true of a file of `size` bytes, or undefined. */
function footerProblem(metadata: FileMetaData, size: number): string | undefined {
  if (!Array.isArray(metadata.row_groups)) return 'it lists no row groups';
  // Column chunks lie between the leading "PAR1" and the footer.
  const dataEnd = BigInt(size - 8 - metadata.metadata_length);
  let sum = 0n;
  for (const [g, group] of metadata.row_groups.entries()) {
    const rows = BigInt(group.num_rows);
    if (rows < 0n) return `row group ${g} has ${rows} rows`;
    sum += rows;
    let stored = 0n;
    for (const [c, chunk] of (group.columns ?? []).entries()) {
      const meta = chunk.meta_data;
      if (!meta) return `row group ${g}, column ${c} has no metadata`;
      const start = BigInt(meta.dictionary_page_offset ?? meta.data_page_offset);
      const length = BigInt(meta.total_compressed_size);
      if (start < 4n || length < 0n || start + length > dataEnd)
        return `row group ${g}, column ${meta.path_in_schema.join('.')}: bytes ${start}-${start + length} are outside the data of a ${size}-byte file`;
      if (BigInt(meta.num_values) < 0n || BigInt(meta.num_values) > length * BigInt(MAX_ROWS_PER_BYTE))
        return `row group ${g}, column ${meta.path_in_schema.join('.')}: ${meta.num_values} values in ${length} bytes`;
      stored += length;
    }
    if (rows > stored * BigInt(MAX_ROWS_PER_BYTE)) return `row group ${g} claims ${rows} rows in ${stored} bytes of column data`;
  }
  if (sum !== BigInt(metadata.num_rows)) return `it claims ${metadata.num_rows} rows, its row groups hold ${sum}`;
  return undefined;
}
