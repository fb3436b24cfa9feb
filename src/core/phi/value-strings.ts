/** A field's path inside a row as a reader writes it: `note`, `prompt[0].content`, `reward_model.ground_truth`. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * `value` with every string inside it (in arrays and plain objects, object keys too) replaced by `fn` of it; other values
 * (numbers, bigints, bytes, dates) as they are. Two keys of one object that `fn` makes the same are both kept, the second
 * numbered (`unusedName`).
 */
export function mapStrings<T>(value: T, fn: (s: string) => string): T {
  if (typeof value === 'string') return fn(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => mapStrings(v, fn)) as T;
  if (!isPlainObject(value)) return value;
  const used = new Set<string>();
  // fromEntries, not assignment: a key `__proto__` stays a key.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [unusedName(fn(k), used), mapStrings(v, fn)])) as T;
}

/**
 * `wanted`, or if `used` has it already the first of `wanted 2`, `wanted 3`... that it has not; added to `used`. Names
 * redacted or masked alike (`[NAME]`) stay apart: one object's keys, one file's columns.
 */
export function unusedName(wanted: string, used: Set<string>): string {
  let name = wanted;
  for (let n = 2; used.has(name); n++) name = `${wanted} ${n}`;
  used.add(name);
  return name;
}

/** `value` with every leaf inside it (what is not an array or a plain object; keys left as they are) replaced by `fn` of it. */
export function mapLeaves<T>(value: T, fn: (leaf: unknown) => unknown): T {
  if (Array.isArray(value)) return value.map((v: unknown) => mapLeaves(v, fn)) as T;
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapLeaves(v, fn)])) as T;
  return fn(value) as T;
}

/**
 * Every string inside a value with its field path, in document order; with `keys`, every object key too (a JSON row
 * carries its own keys: `{"John Smith": {...}}`), each just before its value, with the key's own path and `key: true`.
 */
export function* stringsIn(value: unknown, keys = false, path = ''): Generator<{ field: string; text: string; key?: true }> {
  if (typeof value === 'string') yield { field: path, text: value };
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* stringsIn(v, keys, fieldPath(path, i));
  else if (isPlainObject(value))
    for (const [k, v] of Object.entries(value)) {
      const field = fieldPath(path, k);
      if (keys) yield { field, text: k, key: true };
      yield* stringsIn(v, keys, field);
    }
  // Not a plain object (a parquet reader's typed value): its entries are read, its keys (indices, names of parts) not.
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) yield* stringsIn(v, false, fieldPath(path, k));
}

/** An object literal or a JSON object (also one made without a prototype), not a Date, a Buffer or a class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
