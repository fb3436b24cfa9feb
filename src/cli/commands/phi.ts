import { resolve } from 'node:path';
import { printError, printJson, printLines, stdoutPipe, UsageError, type Command, type CommandContext } from '../command';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import type { Host } from '../../core/remote/host';
import { PHI_CATEGORIES } from '../../core/phi/phi-categories';
import { newPhiSummary, openDatasetForPhi, type PhiSummary } from '../../core/phi/scan-dataset';
import { phiWorkerCount, scanForPhi } from '../../core/phi/scan-range';
import { FINDING_TABLE_HEADER } from '../../core/phi/finding-lines';
import { redactDataset, SameFileError } from '../../core/phi/redact-dataset';
import { openWorkspaceHosts, pickHost } from './workspace-hosts';

const OPTIONS = { host: { type: 'string' }, config: { type: 'string', short: 'c' } } as const;

/** --threads: a whole number of threads from 1 up, or `auto` (one per core). */
function threadsOption(value: string | undefined): number | 'auto' | undefined {
  if (value === undefined || value === 'auto') return value;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--threads takes a whole number from 1 up, or auto; got "${value}"`);
  return Number(value);
}

/** Runs `fn` on the host of --host (a host of medrl.yaml; default this machine), with local paths taken from the cwd. */
async function onHost<T>(
  ctx: CommandContext,
  fn: (host: Host, path: (p: string) => string, label: (p: string) => string) => Promise<T>,
): Promise<T> {
  const { config, pool, hosts } = await openWorkspaceHosts(ctx);
  try {
    const entry = pickHost(hosts, config, (ctx.values.host as string | undefined) ?? LOCAL_HOST);
    const local = entry.kind === 'local';
    const host = await pool.get(entry.name);
    return await fn(
      host,
      (p) => (local ? resolve(ctx.cwd, p) : p),
      (p) => (local ? p : `${entry.name}:${p}`),
    );
  } finally {
    await pool.dispose();
  }
}

/** `phone 3, email 1`, in the categories' order; counts only, never the text found. */
function countsLine(s: PhiSummary): string {
  const parts = PHI_CATEGORIES.filter((c) => s.counts[c]).map((c) => `${c} ${s.counts[c]}`);
  return parts.length ? parts.join(', ') : 'no PHI found';
}

/**
 * Writes to stdout in chunks of about 64 KB (a write per finding cost more than finding it): `add` appends a batch's
 * lines and writes once 64 KB are waiting, waiting while the pipe is full (a scan of a 1 GB dump never piles up); bytes
 * (a worker thread's range of lines) are written as they are, and `add` answers once they are written, as scanForPhi
 * needs before it reuses them. It answers false once the pipe closed (| head). `flush` writes the rest.
 */
function stdoutWriter(ctx: CommandContext): { add(s: string | Uint8Array): Promise<boolean>; flush(): Promise<boolean> } {
  const out = stdoutPipe(ctx);
  let pending = '';
  const flush = async () => {
    const chunk = pending;
    pending = '';
    return chunk ? out.write(chunk) : out.open;
  };
  return {
    add: async (s) => {
      if (typeof s !== 'string') return (await flush()) && out.writeThrough(s);
      pending += s;
      return pending.length < 1 << 16 ? out.open : flush();
    },
    flush,
  };
}

export const phiScanCommand: Command = {
  path: ['phi', 'scan'],
  summary: 'List the PHI (names, dates, phones, emails, MRNs, ...) in every string of a dataset, rollout dump or completions file',
  usage: 'medrl phi scan FILE [--threads N|auto] [--host NAME] [--config FILE_OR_DIR] [--json]',
  details: [
    'FILE is JSONL, JSON, CSV or parquet (verl rollout dumps and TRL completions files included), read as a stream: on --host',
    'NAME (a host of medrl.yaml) it is read there through range reads. Every string of every row is scanned, with its field',
    'path (prompt[0].content, reward_model.ground_truth). Each finding goes to stdout: a table, or with --json one JSON object',
    'per line: {"line", "field", "category", "text", "start", "end"} (line: the row\'s first line; for parquet its 1-based row;',
    'start/end: offsets into the field\'s string; "key": true when it is in an object key of a JSON row or a CSV\'s header).',
    'The counts per category go to stderr; the text found goes nowhere else.',
    '--threads N|auto: scan a local JSONL file of 16 MB or more over N worker threads (default 2, auto: one per core, at',
    'most 12; 1: in one thread), the findings in the same order. Two take about 165 MB and each more about 27 MB.',
    'Exit code (like a linter): 0 nothing found, 1 findings or rows that could not be read (or a failure), 2 bad usage.',
    'Example: medrl phi scan data/notes.jsonl --json > findings.jsonl',
  ].join('\n'),
  options: { ...OPTIONS, threads: { type: 'string' } },
  async run(ctx) {
    const [file, ...more] = ctx.positionals;
    if (!file || more.length) throw new UsageError('give one dataset file');
    const workers = phiWorkerCount(threadsOption(ctx.values.threads as string | undefined));
    return onHost(ctx, async (host, path, label) => {
      const reader = await openDatasetForPhi(host, path(file));
      const summary = newPhiSummary();
      const { add, flush } = stdoutWriter(ctx);
      // With --json every stderr line is JSON too, so a script can read the problems and the counts.
      const onUnreadable = (problem: string) =>
        ctx.json
          ? ctx.stderr.write(`${JSON.stringify({ file, unreadable: problem })}\n`)
          : printError(ctx, `${label(file)}: ${problem} (not scanned)`);
      if (!ctx.json) await add(FINDING_TABLE_HEADER);
      const format = ctx.json ? 'json' : 'table';
      for await (const lines of scanForPhi(host, reader, summary, { onUnreadable, format }, workers)) {
        if (!(await add(lines))) break;
      }
      await flush();
      if (ctx.json)
        ctx.stderr.write(`${JSON.stringify({ file, rows: summary.rows, unreadable: summary.unreadable, counts: summary.counts })}\n`);
      else {
        const unreadable = summary.unreadable ? `, ${summary.unreadable} could not be read` : '';
        printError(ctx, `${label(file)}: ${summary.rows} row(s)${unreadable}: ${countsLine(summary)}`);
      }
      return Object.keys(summary.counts).length || summary.unreadable ? 1 : 0;
    });
  },
};

export const phiRedactCommand: Command = {
  path: ['phi', 'redact'],
  summary: 'Write a copy of a dataset with each PHI finding replaced by its category ([PHONE]), every other byte kept',
  usage: 'medrl phi redact FILE --out OUT [--host NAME] [--config FILE_OR_DIR] [--json]',
  details: [
    'OUT is written on the same host as FILE, readable by you only (0600), under a temporary name renamed when complete; it',
    'cannot be FILE itself. JSONL, JSON and CSV keep every byte but the strings that held PHI, keys and column names too (key',
    'order, spacing, number spelling, escapes; a redacted key that would repeat another is numbered: [NAME] 2); parquet',
    'keeps its schema, row groups and every value, but its pages are encoded anew. A row that cannot be read stops the',
    'redaction with its line, and nothing is written. Prints the rows written and the counts per category, never the text',
    'found.',
    'Example: medrl phi redact data/notes.jsonl --out data/notes.redacted.jsonl',
  ].join('\n'),
  options: { ...OPTIONS, out: { type: 'string', short: 'o' } },
  async run(ctx) {
    const [file, ...more] = ctx.positionals;
    if (!file || more.length) throw new UsageError('give one dataset file');
    const out = ctx.values.out as string | undefined;
    if (!out) throw new UsageError('--out OUT is required (the redacted copy; never FILE itself)');
    return onHost(ctx, async (host, path, label) => {
      let summary: PhiSummary;
      try {
        summary = await redactDataset(host, path(file), path(out));
      } catch (err) {
        throw err instanceof SameFileError ? new UsageError(err.message) : err;
      }
      if (ctx.json) printJson(ctx, { file, out, rows: summary.rows, counts: summary.counts });
      else printLines(ctx, [`wrote ${label(out)}: ${summary.rows} row(s), redacted: ${countsLine(summary)}`]);
      return 0;
    });
  },
};
