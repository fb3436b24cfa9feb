import { LineCounter, parseDocument, isMap, isNode, isScalar, isSeq, type Document } from 'yaml';
import type { z } from 'zod';
import { LocatedError, type Problem } from '../errors/located-error';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';

/**
 * Parses YAML text and validates it with a zod schema, reporting every problem with its file, line, column and field.
 * YAML syntax errors and schema errors are both returned, never thrown away.
 */
export function parseYamlWithSchema<S extends z.ZodType>(
  text: string,
  schema: S,
  file: string,
): { value: z.output<S> | undefined; problems: Problem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problems: Problem[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const pos = lineCounter.linePos(e.pos[0]);
    problems.push({
      file,
      line: pos.line,
      column: pos.col,
      message: `invalid YAML: ${e.message.split('\n')[0]}`,
      severity: doc.errors.includes(e as never) ? 'error' : 'warning',
    });
  }
  if (doc.errors.length) return { value: undefined, problems };
  const data: unknown = doc.toJS({ maxAliasCount: 100 }) ?? {};
  const result = schema.safeParse(data, { error: plainZodError });
  if (result.success) return { value: result.data, problems };
  for (const issue of plainIssues(result.error.issues)) {
    const base = issue.path.map((p) => (typeof p === 'symbol' ? p.toString() : p));
    // An unknown key is reported at the key itself, one problem per key, so each typo gets its own line.
    const paths = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...base, k]) : [base];
    for (const path of paths) {
      problems.push({
        file,
        ...positionOf(doc, path, lineCounter),
        field: path.length ? fieldPath(path) : undefined,
        message: issue.code === 'unrecognized_keys' ? `unknown key "${String(path[path.length - 1])}"` : issue.message,
        severity: 'error',
      });
    }
  }
  return { value: undefined, problems };
}

/**
 * `edited` (what the yaml library printed: LF) with the line endings of `original`: a CRLF file stays CRLF, so an edit
 * does not rewrite every line of the user's file.
 */
export function withLineEndingsOf(original: string, edited: string): string {
  return /\r\n/.test(original) ? edited.replace(/\r?\n/g, '\r\n') : edited;
}

/** Like parseYamlWithSchema but throws a LocatedError listing every problem. */
export function loadYamlWithSchema<S extends z.ZodType>(text: string, schema: S, file: string): z.output<S> {
  const { value, problems } = parseYamlWithSchema(text, schema, file);
  if (value === undefined)
    throw new LocatedError(
      `${file} is not valid`,
      problems.filter((p) => p.severity === 'error'),
    );
  return value;
}

/**
 * Where a field (`data.train`, `services[0].model`) is in a YAML text (1-based line and column), for problems found after
 * parsing (e.g. host checks).
 */
export function fieldPosition(text: string, field: string): { line?: number; column?: number } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  return positionOf(
    doc,
    field
      .replace(/\[(\d+)\]/g, '.$1')
      .split('.')
      .filter(Boolean)
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
    lineCounter,
  );
}

/** The line and column of the deepest key on the path that exists (a missing key points at its parent's key). */
function positionOf(doc: Document, path: (string | number)[], lc: LineCounter): { line?: number; column?: number } {
  const at = (offset: number) => {
    const pos = lc.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  for (let n = path.length; n > 0; n--) {
    const parent = n === 1 ? doc.contents : doc.getIn(path.slice(0, n - 1), true);
    const last = path[n - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === last);
      if (pair && isNode(pair.key) && pair.key.range) return at(pair.key.range[0]);
    } else if (isSeq(parent) && typeof last === 'number') {
      const item = parent.items[last];
      if (isNode(item) && item.range) return at(item.range[0]);
    }
  }
  return isNode(doc.contents) && doc.contents.range ? at(doc.contents.range[0]) : {};
}
