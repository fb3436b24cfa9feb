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

/** stdout for a long output: see stdoutPipe. */
export interface StdoutPipe {
  /** Writes, waiting while the pipe is full; false once the reader has closed it. */
  write(chunk: string | Uint8Array): Promise<boolean>;
  /** Writes, waiting until the bytes have been handed to the system: the caller may then reuse them. */
  writeThrough(chunk: Uint8Array): Promise<boolean>;
  /** False once the reader has closed the pipe. */
  readonly open: boolean;
}

/**
 * stdout for an output that can be long (a 1 GB log's metrics, a dump's episodes, a scan's findings): each write waits
 * while the pipe is full, so nothing piles up in memory, and a reader that closed the pipe (`| head`) ends the output
 * instead of failing the command with an EPIPE error.
 */
export function stdoutPipe(ctx: Pick<CommandContext, 'stdout'>): StdoutPipe {
  let closed = false;
  ctx.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    closed = true;
  });
  return {
    get open() {
      return !closed;
    },
    async write(chunk) {
      if (closed) return false;
      if (!ctx.stdout.write(chunk))
        await new Promise<void>((resolve) => {
          const done = () => {
            ctx.stdout.off('drain', done);
            ctx.stdout.off('error', done);
            resolve();
          };
          ctx.stdout.on('drain', done);
          ctx.stdout.on('error', done);
        });
      return !closed;
    },
    async writeThrough(chunk) {
      if (closed) return false;
      // The callback comes once the chunk is written, or with the error of a closed pipe ('error' marks it closed).
      await new Promise<void>((resolve) => ctx.stdout.write(chunk, () => resolve()));
      return !closed;
    },
  };
}

/** Human-readable lines on stdout: text from files and models in them cannot drive the terminal (terminalText). */
export function printLines(ctx: CommandContext, lines: string[]): void {
  ctx.stdout.write(printableLines(lines));
}

/** What printLines writes: the lines, each ending in a newline, made safe for a terminal (nothing for no lines). */
export function printableLines(lines: string[]): string {
  return lines.length ? `${terminalText(lines.join('\n'))}\n` : '';
}

/** One line on stderr (a warning, a problem, progress), made as safe as printLines's. */
export function printError(ctx: Pick<CommandContext, 'stderr'>, line: string): void {
  ctx.stderr.write(`${terminalText(line)}\n`);
}
