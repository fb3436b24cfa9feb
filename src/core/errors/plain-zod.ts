import { z } from 'zod';

/** zod's type names as a person says them. */
const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping of fields',
  record: 'a mapping of fields',
  array: 'a list',
  tuple: 'a list',
  null: 'null',
  date: 'a date',
};

function typeWord(t: string): string {
  return TYPE_WORDS[t] ?? t;
}

/** What a schema stands for in a person's words, where its type alone says too little ("a list of chat messages"). */
const EXPECTED = z.registry<{ words: string }>();

/** Names what `schema` wants, for "missing: expected …" and "must be … (got …)". Returns the schema. */
export function expecting<S extends z.ZodType>(schema: S, words: string): S {
  EXPECTED.add(schema, { words });
  return schema;
}

/** What the schema behind an issue wants: its registered words, else the fields of an object, else zod's `expected` type. */
function wanted(inst: unknown, expected: string | undefined): string {
  const schema = inst instanceof z.ZodType ? inst : undefined;
  const words = schema && EXPECTED.get(schema)?.words;
  if (words) return words;
  const def = schema?.def as { type: string; innerType?: z.ZodType; shape?: Record<string, unknown> } | undefined;
  // `.nonoptional()` wraps what is wanted; an object names its fields.
  if (def?.type === 'nonoptional' && def.innerType) return wanted(def.innerType, undefined);
  if (def?.type === 'object' && def.shape) {
    const keys = Object.keys(def.shape);
    return `a mapping with ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''}`;
  }
  const type = expected && expected !== 'nonoptional' ? expected : def?.type;
  // zod gives no schema for a missing key of `z.unknown()`: only that something must be there.
  return type === undefined || type === 'unknown' || type === 'any' ? 'a value' : typeWord(type);
}

/** A field's path as code writes it: `prompt[0].content`, `reward_model.ground_truth`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out;
}

/** What a value is, for "got ...": short, with the value itself when it is small. */
function got(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  const s = JSON.stringify(input) ?? String(input);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

function list(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
}

/**
 * zod's error map in plain words: "missing: expected text" (zod: "expected string, received undefined", or "expected
 * nonoptional"), "must be a number (got "x")", "must be one of a, b". Pass it to `safeParse(data, { error: plainZodError })`;
 * a schema's own message still wins. Returns undefined (zod's own words) for what has no plainer form (refinements say their
 * own).
 */
export const plainZodError: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type': {
      const what = wanted(issue.inst, issue.expected);
      return issue.input === undefined ? `missing: expected ${what}` : `must be ${what} (got ${got(issue.input)})`;
    }
    case 'invalid_value': {
      const what = issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${list(issue.values)}`;
      return issue.input === undefined ? `missing: expected ${what}` : `must be ${what} (got ${got(issue.input)})`;
    }
    case 'invalid_union': {
      const registered = issue.inst instanceof z.ZodType ? EXPECTED.get(issue.inst)?.words : undefined;
      // Every form wanted a different type: name them ("must be text or a number").
      const types = issue.errors.map((e) =>
        e.length === 1 && e[0]!.code === 'invalid_type' && e[0]!.path.length === 0 ? typeWord(e[0]!.expected) : undefined,
      );
      const what = registered ?? (types.length && types.every((t) => t !== undefined) ? [...new Set(types)].join(' or ') : undefined);
      if (issue.input === undefined) return `missing: expected ${what ?? 'a value'}`;
      return what ? `must be ${what} (got ${got(issue.input)})` : `is not any of the accepted forms (got ${got(issue.input)})`;
    }
    case 'too_small': {
      const n = Number(issue.minimum);
      if (issue.origin === 'array' || issue.origin === 'set') return n === 1 ? 'must not be empty' : `must have at least ${n} items`;
      if (issue.origin === 'string') return n === 1 ? 'must not be empty' : `must be at least ${n} characters`;
      return `must be ${issue.inclusive ? 'at least' : 'more than'} ${n} (got ${got(issue.input)})`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${n} items`;
      if (issue.origin === 'string') return `must be at most ${n} characters`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${n} (got ${got(issue.input)})`;
    }
    case 'invalid_format':
      return `must be a valid ${issue.format} (got ${got(issue.input)})`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    default:
      return undefined;
  }
};

/**
 * zod's issues with a union's explained: where one form of a union fits the value's type and only something inside it is
 * wrong (a list of messages with one message lacking `content`), its issues stand, at their full paths, for the union's
 * "must be text or a list of messages (got a list)".
 */
export function plainIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'invalid_union') return [issue];
    const inside = issue.errors.find((e) => e.length > 0 && e.every((i) => i.path.length > 0));
    return inside ? plainIssues(inside.map((i) => ({ ...i, path: [...issue.path, ...i.path] }))) : [issue];
  });
}
