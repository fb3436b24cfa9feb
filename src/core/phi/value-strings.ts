/** A field's path inside a row as a reader writes it: `note`, `prompt[0].content`, `reward_model.ground_truth`. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * `value` with every string inside it (in arrays and plain objects; keys left as they are) replaced by `fn` of it; other
 * values (numbers, bigints, bytes, dates) as they are.
 */
export function mapStrings<T>(value: T, fn: (s: string) => string): T {
  return mapLeaves(value, (v) => (typeof v === 'string' ? fn(v) : v));
}

/** `value` with every leaf inside it (what is not an array or a plain object; keys left as they are) replaced by `fn` of it. */
export function mapLeaves<T>(value: T, fn: (leaf: unknown) => unknown): T {
  if (Array.isArray(value)) return value.map((v: unknown) => mapLeaves(v, fn)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapLeaves(v, fn)])) as T;
  return fn(value) as T;
}

/** Every string inside a value (object keys excluded) with its field path, in document order. */
export function* stringsIn(value: unknown, path = ''): Generator<{ field: string; text: string }> {
  if (typeof value === 'string') yield { field: path, text: value };
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* stringsIn(v, fieldPath(path, i));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) yield* stringsIn(v, fieldPath(path, k));
}
