/** Where a problem is: a file (local or `host:path`), 1-based line and column, and a dotted field path. */
export interface Location {
  file?: string;
  line?: number;
  column?: number;
  field?: string;
  host?: string;
}

/** One problem found in user input, with where it is and what to do. */
export interface Problem extends Location {
  message: string;
  severity: 'error' | 'warning';
}

function formatLocation(loc: Location): string {
  const parts: string[] = [];
  if (loc.host) parts.push(`${loc.host}:`);
  if (loc.file) parts.push(loc.file);
  if (loc.line !== undefined) parts.push(`:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}`);
  let where = parts.join('');
  if (loc.field) where += `${where ? ' ' : ''}(${loc.field})`;
  return where;
}

export function formatProblem(p: Problem): string {
  const where = formatLocation(p);
  return `${where ? `${where}: ` : ''}${p.severity}: ${p.message}`;
}

/** An error that carries the problems behind it, so callers can show each one where it is. */
export class LocatedError extends Error {
  readonly problems: Problem[];
  constructor(summary: string, problems: Problem[], options?: { cause?: unknown }) {
    super(problems.length ? `${summary}\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}` : summary, options);
    this.name = 'LocatedError';
    this.problems = problems;
  }
}

/**
 * The message of anything thrown, for a log line or a notification, with its cause chain: each cause whose text the
 * message does not already hold (callers often write `${outer}: ${errorMessage(inner)}` and pass `inner` as the cause).
 */
export function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let message = err.message;
  let cause: unknown = err.cause;
  for (let depth = 0; cause !== undefined && depth < 10; depth++) {
    const text = cause instanceof Error ? cause.message : String(cause);
    if (!message.includes(text)) message += ` (caused by: ${text})`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return message;
}
