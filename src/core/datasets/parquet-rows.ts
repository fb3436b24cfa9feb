import { parquetWriteBuffer } from 'hyparquet-writer';
import type { SchemaElement } from 'hyparquet';

/** The shape of a value, inferred from every row, that decides its parquet type. */
type Shape =
  | { t: 'null' }
  | { t: 'string' }
  | { t: 'int' }
  | { t: 'double' }
  | { t: 'bool' }
  | { t: 'json' }
  | { t: 'list'; of: Shape }
  | { t: 'struct'; fields: Map<string, Shape> };

function shapeOf(v: unknown): Shape {
  if (v === null || v === undefined) return { t: 'null' };
  if (typeof v === 'string') return { t: 'string' };
  if (typeof v === 'boolean') return { t: 'bool' };
  if (typeof v === 'number') return Number.isInteger(v) ? { t: 'int' } : { t: 'double' };
  if (Array.isArray(v)) return { t: 'list', of: v.map(shapeOf).reduce(merge, { t: 'null' }) };
  if (typeof v === 'object') {
    const fields = new Map<string, Shape>();
    for (const [k, x] of Object.entries(v)) fields.set(k, shapeOf(x));
    return fields.size ? { t: 'struct', fields } : { t: 'json' };
  }
  return { t: 'json' };
}

function merge(a: Shape, b: Shape): Shape {
  if (a.t === 'null') return b;
  if (b.t === 'null') return a;
  if (a.t === 'list' && b.t === 'list') return { t: 'list', of: merge(a.of, b.of) };
  if (a.t === 'struct' && b.t === 'struct') {
    const fields = new Map(a.fields);
    for (const [k, s] of b.fields) fields.set(k, merge(fields.get(k) ?? { t: 'null' }, s));
    return { t: 'struct', fields };
  }
  if (a.t === b.t) return a;
  if ((a.t === 'int' && b.t === 'double') || (a.t === 'double' && b.t === 'int')) return { t: 'double' };
  return { t: 'json' }; // mixed kinds: kept as text (JSON for objects)
}

function elements(name: string, s: Shape): SchemaElement[] {
  switch (s.t) {
    case 'null':
    case 'string':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }];
    case 'json':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }];
    case 'int':
      return [{ name, type: 'INT64', repetition_type: 'OPTIONAL' }];
    case 'double':
      return [{ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' }];
    case 'bool':
      return [{ name, type: 'BOOLEAN', repetition_type: 'OPTIONAL' }];
    case 'list':
      return [
        { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        ...elements('element', s.of),
      ];
    case 'struct':
      return [{ name, repetition_type: 'OPTIONAL', num_children: s.fields.size }, ...[...s.fields].flatMap(([k, f]) => elements(k, f))];
  }
}

function convert(s: Shape, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (s.t) {
    case 'null':
      return null;
    case 'int':
      return BigInt(v as number);
    case 'string':
    case 'double':
    case 'bool':
      return v;
    case 'json':
      return typeof v === 'string' ? v : JSON.stringify(v);
    case 'list':
      return (v as unknown[]).map((x) => convert(s.of, x));
    case 'struct': {
      const out: Record<string, unknown> = {};
      for (const [k, f] of s.fields) out[k] = convert(f, (v as Record<string, unknown>)[k]);
      return out;
    }
  }
}

/**
 * Rows of JSON-like objects as a parquet file, with nested types as pyarrow writes them (lists of structs for chat
 * messages, structs for `reward_model` and `extra_info`), so verl and TRL read it through `datasets`/pyarrow unchanged.
 * The schema is inferred from all rows; columns keep their first-seen order. The same rows always give the same bytes.
 */
export function rowsToParquet(rows: Record<string, unknown>[]): Uint8Array {
  const columns = new Map<string, Shape>();
  for (const r of rows) for (const [k, v] of Object.entries(r)) columns.set(k, merge(columns.get(k) ?? { t: 'null' }, shapeOf(v)));
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.size }, ...[...columns].flatMap(([k, s]) => elements(k, s))];
  const columnData = [...columns].map(([name, s]) => ({ name, data: rows.map((r) => convert(s, r[name])) }));
  return new Uint8Array(parquetWriteBuffer({ columnData, schema, createdBy: 'medrl-studio' }));
}

/** Rows as JSON lines (one object per line, newline at the end). */
export function rowsToJsonl(rows: unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');
}
