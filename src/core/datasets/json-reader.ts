import type { Host } from '../remote/host';
import type { DatasetReader, DatasetRecord, RowsOptions } from './dataset-reader';
import { parseJsonLine, rowDepthProblem } from '../io/json-line';

/** JSON has no row boundaries to seek to, so it is parsed whole: above this size, JSONL or parquet is the way. */
const MAX_JSON_BYTES = 256 * 1024 * 1024;

/**
 * A JSON dataset: an array of rows, an object of arrays (e.g. `{"train": [...], "test": [...]}`: each row's `key` is its
 * array's name), or an object keyed by id (PubMedQA's `{"21645374": {...}}`: each row's `key` is its id).
 */
export async function openJsonDataset(host: Host, path: string, size: number): Promise<DatasetReader> {
  if (size > MAX_JSON_BYTES) {
    throw new Error(
      `${host.name}:${path}: a JSON file of ${size} bytes is too large to parse whole (limit ${MAX_JSON_BYTES}); use JSONL or parquet`,
    );
  }
  const raw = (await host.readFile(path)).toString('utf8');
  // A UTF-8 byte order mark (Windows editors) is no JSON: JSON.parse refuses it.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  // Rows are checked for depth one by one below, so one deep row is one bad row.
  const { value: doc, error } = parseJsonLine(text, Infinity);
  if (error !== undefined) throw new Error(`${host.name}:${path}: ${error}`);
  const records = jsonRecords(doc, jsonLayout(text), `${host.name}:${path}`);
  return {
    host,
    path,
    format: 'json',
    size,
    knownRowCount: records.length,
    async *rows(opts: RowsOptions = {}) {
      for (let i = opts.start ?? 0; i < records.length; i++) {
        opts.signal?.throwIfAborted();
        yield records[i]!;
      }
    },
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A row of a JSON document, or an error in its place when it nests too deep for the code that walks rows. */
function record(r: DatasetRecord & { value: unknown }): DatasetRecord {
  const deep = rowDepthProblem(r.value);
  if (deep === undefined) return r;
  const { value: _value, ...where } = r;
  return { ...where, error: `${r.line !== undefined ? `line ${r.line}: ` : ''}row ${r.index}: ${deep}` };
}

function jsonRecords(doc: unknown, layout: JsonLayout, where: string): DatasetRecord[] {
  if (Array.isArray(doc)) return doc.map((value, index) => record({ index, value, line: layout.depth1[index] }));
  if (!isPlainObject(doc))
    throw new Error(`${where}: the JSON document is a ${typeof doc}: expected an array of rows or an object of rows`);
  // Keys in document order: JSON.parse puts integer-like keys (PubMed ids) first in numeric order.
  const keys = [...new Set(layout.keys)].filter((k) => Object.hasOwn(doc, k));
  const entries = keys.map((k) => [k, doc[k]] as const);
  if (entries.length > 0 && entries.every(([, v]) => Array.isArray(v))) {
    const out: DatasetRecord[] = [];
    for (const [key, arr] of entries as (readonly [string, unknown[]])[]) {
      for (const value of arr) out.push(record({ index: out.length, key, value, line: layout.depth2[out.length] }));
    }
    return out;
  }
  if (entries.every(([, v]) => isPlainObject(v))) {
    return entries.map(([key, value], index) => record({ index, key, value, line: layout.depth1[index] }));
  }
  const bad = entries.find(([, v]) => !isPlainObject(v) && !Array.isArray(v));
  throw new Error(
    `${where}: the top-level object mixes kinds of values (e.g. "${bad?.[0] ?? ''}"): expected an object of arrays or an object keyed by id`,
  );
}

interface JsonLayout {
  /** The 1-based line where each value at depth 1 and depth 2 starts, in document order (for Problems at the right line). */
  depth1: number[];
  depth2: number[];
  /** The keys of a top-level object, in document order. */
  keys: string[];
}

/** Where the rows of a JSON text start, and the top-level keys in order, from one pass over its characters. */
function jsonLayout(text: string): JsonLayout {
  const depth1: number[] = [];
  const depth2: number[] = [];
  const keys: string[] = [];
  let keyStart = -1;
  let line = 1;
  let depth = 0;
  let inString = false;
  // Whether the next non-space character starts a value at this depth (after `[`, `,` in an array, or `:`).
  let expectValue = false;
  const inArray: boolean[] = [];
  const mark = () => {
    if (!expectValue) return;
    if (depth === 1) depth1.push(line);
    else if (depth === 2) depth2.push(line);
    expectValue = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character (never a newline in valid JSON)
      else if (c === 34) {
        inString = false;
        if (keyStart >= 0) keys.push(JSON.parse(text.slice(keyStart, i + 1)) as string);
        keyStart = -1;
      }
      continue;
    }
    switch (c) {
      case 32:
      case 9:
      case 10:
      case 13:
        break;
      case 34: // a string: a value where one is expected, else an object key
        if (!expectValue && depth === 1 && inArray[0] === false) keyStart = i;
        mark();
        inString = true;
        break;
      case 91:
      case 123: // [ {
        mark();
        inArray[depth] = c === 91;
        depth++;
        expectValue = c === 91;
        break;
      case 93:
      case 125: // ] }
        depth--;
        expectValue = false;
        break;
      case 44: // ,
        expectValue = inArray[depth - 1] === true;
        break;
      case 58: // :
        expectValue = true;
        break;
      default:
        mark();
    }
  }
  return { depth1, depth2, keys };
}
