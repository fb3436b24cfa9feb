import type { ParseArgsConfig } from 'node:util';
import { terminalText } from '../core/format/terminal-text';

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** What a command gets: parsed options and positionals, and where to write. */
export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  json: boolean;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Lines after a literal `--` (e.g. `medrl exec HOST -- CMD ...`). */
  rest: string[];
}

export interface Command {
  /** Words that name it, e.g. ['hosts', 'list']. */
  path: string[];
  summary: string;
  usage: string;
  /** Extra lines of help: arguments and examples. */
  details?: string;
  options?: OptionSpec;
  /** Returns the exit code: 0 ok, 1 problems found or failure, 2 bad usage. */
  run(ctx: CommandContext): Promise<number>;
}

/** Thrown for a wrong call: printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

export function printJson(ctx: CommandContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Human-readable lines on stdout: text from files and models in them cannot drive the terminal (terminalText). */
export function printLines(ctx: CommandContext, lines: string[]): void {
  if (lines.length) ctx.stdout.write(`${terminalText(lines.join('\n'))}\n`);
}

/** One line on stderr (a warning, a problem, progress), made as safe as printLines's. */
export function printError(ctx: Pick<CommandContext, 'stderr'>, line: string): void {
  ctx.stderr.write(`${terminalText(line)}\n`);
}
