import type { z } from 'zod';

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
 * zod's error map in plain words: "missing" (zod: "expected string, received undefined", or "expected nonoptional"),
 * "must be a number (got "x")", "must be one of a, b". Pass it to `safeParse(data, { error: plainZodError })`; a schema's
 * own message still wins. Returns undefined (zod's own words) for what has no plainer form (refinements say their own).
 */
export const plainZodError: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined || issue.expected === 'nonoptional') return 'missing';
      return `must be ${typeWord(issue.expected)} (got ${got(issue.input)})`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])} (got ${got(issue.input)})`
        : `must be one of ${list(issue.values)} (got ${got(issue.input)})`;
    case 'invalid_union': {
      if (issue.input === undefined) return 'missing';
      // Every form wanted a different type: name them ("must be text or a number").
      const types = issue.errors.map((e) =>
        e.length === 1 && e[0]!.code === 'invalid_type' && e[0]!.path.length === 0 ? typeWord(e[0]!.expected) : undefined,
      );
      if (types.length && types.every((t) => t !== undefined))
        return `must be ${[...new Set(types)].join(' or ')} (got ${got(issue.input)})`;
      return `is not any of the accepted forms (got ${got(issue.input)})`;
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
