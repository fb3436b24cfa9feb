import { parquetReadObjects, type SchemaElement } from 'hyparquet';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { openParquetFile, parquetWhy } from '../io/parquet-file';
import type { Host } from '../remote/host';
import { errorMessage } from '../errors/located-error';
import type { PhiCategory } from './phi-categories';
import { redactText } from './redact-text';
import { mapLeaves } from './value-strings';
import { countFinding, hideQuotedText, type PhiSummary } from './scan-dataset';
import type { PrivateOutput } from './private-output';

/**
 * Every string inside a parquet value redacted, and every date and timestamp (typed values, which cannot hold `[DATE]`)
 * made null: Safe Harbor counts every element of a date but its year, and a typed value has no form that keeps only that.
 */
function redactValue(v: unknown, onFinding: (category: PhiCategory) => void): unknown {
  return mapLeaves(v, (leaf) => {
    if (leaf instanceof Date) {
      onFinding('date');
      return null;
    }
    if (typeof leaf !== 'string') return leaf;
    const { text, categories } = redactText(leaf);
    categories.forEach(onFinding);
    return text;
  });
}

/** The source's schema with its date and timestamp columns optional, so the nulls that replace their values can be written. */
function nullableDates(schema: SchemaElement[]): SchemaElement[] {
  return schema.map((e) => {
    const dated =
      e.type === 'INT96' ||
      e.converted_type === 'DATE' ||
      e.converted_type === 'TIMESTAMP_MILLIS' ||
      e.converted_type === 'TIMESTAMP_MICROS' ||
      e.logical_type?.type === 'DATE' ||
      e.logical_type?.type === 'TIMESTAMP';
    return dated && e.repetition_type === 'REQUIRED' ? { ...e, repetition_type: 'OPTIONAL' } : e;
  });
}

/**
 * Copies a parquet file with PHI redacted, row group by row group, with the source's own schema (its date and timestamp columns made optional) and row groups. Parquet is
 * value-identical, not byte-identical: the pages are encoded anew (hyparquet-writer, as the dataset converter writes), so
 * encodings, compression and statistics may differ from the source's writer. Memory holds one row group at a time.
 */
export async function redactParquet(host: Host, path: string, size: number, out: PrivateOutput, summary: PhiSummary): Promise<void> {
  const where = `${host.name}:${path}`;
  const { file, metadata, columns } = await openParquetFile(host, path, size).catch((err: unknown) => {
    throw new Error(hideQuotedText(errorMessage(err)));
  });
  const bytes = new ByteWriter();
  // Each finished row group goes to the host before the next is encoded.
  let pending: Promise<void> = Promise.resolve();
  const drain = () => {
    const chunk = new Uint8Array(bytes.buffer, 0, bytes.index).slice();
    bytes.index = 0;
    pending = pending.then(() => out.write(chunk));
    return pending;
  };
  Object.assign(bytes, { flush: drain, finish: drain });
  const writer = new ParquetWriter({ writer: bytes, schema: nullableDates(metadata.schema), createdBy: 'medrl-studio phi redact' });
  let rowStart = 0;
  for (const [g, group] of metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, utf8: true }).catch((err: unknown) => {
      throw new Error(`${where}: row group ${g} (rows ${rowStart + 1}-${rowEnd}): cannot decode: ${hideQuotedText(parquetWhy(err))}`);
    });
    const redacted = rows.map((r) => redactValue(r, (c) => countFinding(summary, c)) as Record<string, unknown>);
    summary.rows += rows.length;
    await writer.write({
      columnData: columns.map((name) => ({ name, data: redacted.map((r) => r[name]) })),
      rowGroupSize: rows.length || 1,
    });
    rowStart = rowEnd;
  }
  await writer.finish();
  await pending;
}
