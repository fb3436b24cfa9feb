import { resolve } from 'node:path';
import type { Command, CommandContext } from '../command';
import { UsageError, printJson, printLines } from '../command';
import { openWorkspace } from '../host-pool';
import type { Host } from '../../core/remote/host';
import { LocalHost } from '../../core/remote/local-host';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { openDataset } from '../../core/datasets/open-dataset';
import { inspectDataset, type DatasetProblem, type DatasetSummary } from '../../core/datasets/inspect-dataset';
import { DATASET_KIND_LABELS } from '../../core/datasets/dataset-kinds';
import { CONVERT_FORMATS, convertDataset, type ConvertFormat, type ConvertOptions } from '../../core/datasets/convert-dataset';
import { writeConverted, type OutputFileFormat } from '../../core/datasets/write-dataset';
import { formatBytes } from '../../core/format/bytes';
import { rowAndField } from '../../core/format/row-line';

/** The host a dataset command reads from: `--host NAME` from the workspace's medrl.yaml, else this machine. */
async function hostFor(ctx: CommandContext): Promise<{ host: Host; path: (p: string) => string; done: () => Promise<void> }> {
  const name = ctx.values.host as string | undefined;
  if (!name || name === LOCAL_HOST) return { host: new LocalHost(), path: (p) => resolve(ctx.cwd, p), done: async () => {} };
  const { pool } = await openWorkspace(ctx.cwd, ctx.values.config as string | undefined);
  return { host: await pool.get(name), path: (p) => p, done: () => pool.dispose() };
}

function intOption(ctx: CommandContext, name: string): number | undefined {
  const raw = ctx.values[name] as string | undefined;
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive whole number, got "${raw}"`);
  return n;
}

function formatDatasetProblem(file: string, p: DatasetProblem): string {
  // The line leads (file:line); the row beside it, counted from 1 as the line is.
  const where = rowAndField(p);
  return `${file}${p.line !== undefined ? `:${p.line}` : ''}${where ? ` (${where})` : ''}: ${p.severity}: ${p.reason}`;
}

function counts(c: Record<string, number>): string {
  return Object.entries(c)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

function summaryLines(s: DatasetSummary): string[] {
  const file = s.host === LOCAL_HOST ? s.path : `${s.host}:${s.path}`;
  const lines = [
    `${file}`,
    `  format   ${s.format}, ${formatBytes(s.size)}`,
    `  kind     ${DATASET_KIND_LABELS[s.kind]} (${s.kind})`,
    `  rows     ${s.rows} (${s.rowsOk} fine, ${s.rows - s.rowsOk} with problems)`,
    `  columns  ${s.columns.join(', ')}`,
  ];
  if (Object.keys(s.dataSources).length) lines.push(`  data_source  ${counts(s.dataSources)}`);
  if (Object.keys(s.abilities).length) lines.push(`  ability  ${counts(s.abilities)}`);
  if (s.comparedWith) lines.push(`  compared with the training split ${s.comparedWith}`);
  lines.push(`  prompts checked against ${s.tokenBudget.maxPromptTokens} tokens (estimated as characters / 4)`);
  lines.push(...s.problems.map((p) => formatDatasetProblem(file, p)));
  if (s.problemCount > s.problems.length) lines.push(`  … and ${s.problemCount - s.problems.length} more problem(s)`);
  lines.push(s.problemCount ? `${s.problemCount} problem(s)` : 'no problems');
  return lines;
}

export const datasetInspectCommand: Command = {
  path: ['dataset', 'inspect'],
  summary: 'Kind, rows, columns, data_source counts and every problem of a dataset (JSON, JSONL, parquet, CSV)',
  usage:
    'medrl dataset inspect FILE [--host NAME] [--config FILE_OR_DIR] [--against TRAIN_FILE] [--max-prompt-tokens N] [--max-problems N] [--json]',
  details: [
    'Reads the file once through range reads (on a remote host only the bytes it needs). Checks each row against the schema of',
    'its kind (verl RL, verl SFT, TRL prompt-only / conversational / prompt-completion, DPO preference), and finds duplicate',
    'prompts, empty ground truths, prompts over the token budget (characters / 4; default 1024) and prompts that are also in the',
    'training split (train.EXT beside a test/val file, or --against). Exit code 1 when there are problems.',
    'Example: medrl dataset inspect data/pubmedqa/verl/test.parquet',
  ].join('\n'),
  options: {
    host: { type: 'string' },
    config: { type: 'string', short: 'c' },
    against: { type: 'string' },
    'max-prompt-tokens': { type: 'string' },
    'max-problems': { type: 'string' },
  },
  async run(ctx) {
    const file = ctx.positionals[0];
    if (!file || ctx.positionals.length > 1) throw new UsageError('give one dataset file');
    const maxPromptTokens = intOption(ctx, 'max-prompt-tokens');
    const maxProblems = intOption(ctx, 'max-problems');
    const { host, path, done } = await hostFor(ctx);
    try {
      const reader = await openDataset(host, path(file));
      const againstArg = ctx.values.against as string | undefined;
      const against = againstArg ? await openDataset(host, path(againstArg)) : undefined;
      const summary = await inspectDataset(reader, { maxPromptTokens, maxProblems, ...(against ? { against } : {}) });
      if (ctx.json) printJson(ctx, summary);
      else printLines(ctx, summaryLines(summary));
      return summary.problemCount ? 1 : 0;
    } finally {
      await done();
    }
  },
};

/** `question=QUESTION,answer=final_decision,...` as mapping fields. */
function parseMap(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new UsageError(`--map: "${part}" is not KEY=FIELD`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

const MAP_KEYS = ['question', 'answer', 'id', 'data_source', 'ability'];

export const datasetConvertCommand: Command = {
  path: ['dataset', 'convert'],
  summary: 'Convert raw JSON/JSONL/CSV/parquet rows to verl RL parquet or a TRL format, with a field mapping and a seeded split',
  usage:
    'medrl dataset convert IN OUT --map question=FIELD,answer=FIELD[,id=FIELD][,data_source=FIELD][,ability=FIELD] [--data-source NAME] [--ability NAME] [--template TEXT] [--system TEXT] [--extra F1,F2] [--split 0.9 --seed 42] [--format verl|verl-sft|trl-prompt-only|trl-prompt-completion|trl-conversational] [--file-format parquet|jsonl|json] [--jsonl-twin] [--host NAME] [--json]',
  details: [
    'Without --split, OUT is one file (.parquet, .jsonl or .json). With --split FRACTION, OUT is a folder that gets train.EXT and',
    'test.EXT (FRACTION of the rows for training, picked by a seeded shuffle: the same seed gives the same split).',
    '--template builds the user prompt from {FIELD} variables ({question} and {answer} name the mapped fields; lists are joined',
    'one item per line). Fields with dots reach into nested objects; _key is the id of a row in a JSON object keyed by id.',
    '--data-source/--ability are fixed names (default: dataset, medical) when the map has no field for them.',
    'Rows that cannot be converted are reported with row, field and reason (exit code 1); the others are written.',
    'Example: medrl dataset convert ori_pqal.json out --map question=QUESTION,answer=final_decision,id=_key --data-source pubmedqa \\',
    '           --template "{CONTEXTS}\\n\\nQuestion: {QUESTION}" --split 0.9 --seed 42',
  ].join('\n'),
  options: {
    map: { type: 'string', short: 'm' },
    'data-source': { type: 'string' },
    ability: { type: 'string' },
    template: { type: 'string' },
    system: { type: 'string' },
    extra: { type: 'string' },
    split: { type: 'string' },
    seed: { type: 'string' },
    format: { type: 'string' },
    'file-format': { type: 'string' },
    'jsonl-twin': { type: 'boolean' },
    host: { type: 'string' },
    config: { type: 'string', short: 'c' },
  },
  async run(ctx) {
    const [input, out] = ctx.positionals;
    if (!input || !out || ctx.positionals.length > 2) throw new UsageError('give IN and OUT');
    if (!ctx.values.map) throw new UsageError('--map is required (at least question=FIELD,answer=FIELD)');
    const map = parseMap(ctx.values.map as string);
    for (const k of Object.keys(map))
      if (!MAP_KEYS.includes(k)) throw new UsageError(`--map: unknown key "${k}" (one of ${MAP_KEYS.join(', ')})`);
    if (!map.question || !map.answer) throw new UsageError('--map needs question=FIELD and answer=FIELD');
    const format = (ctx.values.format as string | undefined) ?? 'verl';
    if (!(CONVERT_FORMATS as readonly string[]).includes(format))
      throw new UsageError(`--format must be one of ${CONVERT_FORMATS.join(', ')}`);
    const fileFormat = (ctx.values['file-format'] as string | undefined) ?? 'parquet';
    if (!['parquet', 'jsonl', 'json'].includes(fileFormat)) throw new UsageError('--file-format must be parquet, jsonl or json');
    const splitRaw = ctx.values.split as string | undefined;
    const split = splitRaw === undefined ? undefined : Number(splitRaw);
    if (split !== undefined && !(split > 0 && split < 1))
      throw new UsageError(`--split must be a fraction between 0 and 1, got "${splitRaw}"`);
    const seedRaw = (ctx.values.seed as string | undefined) ?? '42';
    const seed = Number(seedRaw);
    if (!Number.isInteger(seed)) throw new UsageError(`--seed must be a whole number, got "${seedRaw}"`);
    // A template typed on a command line has literal \n for newlines.
    const unescape = (s: string | undefined) => s?.replace(/\\n/g, '\n').replace(/\\t/g, '\t');
    const options: ConvertOptions = {
      format: format as ConvertFormat,
      split,
      seed,
      mapping: {
        question: map.question,
        answer: map.answer,
        id: map.id,
        dataSource: map.data_source,
        dataSourceName: (ctx.values['data-source'] as string | undefined) ?? 'dataset',
        ability: map.ability,
        abilityName: (ctx.values.ability as string | undefined) ?? 'medical',
        template: unescape(ctx.values.template as string | undefined),
        system: unescape(ctx.values.system as string | undefined),
        extra: ((ctx.values.extra as string | undefined) ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      },
    };
    const { host, path, done } = await hostFor(ctx);
    try {
      const result = await convertDataset(await openDataset(host, path(input)), options);
      const files = await writeConverted(host, result, {
        out: path(out),
        split: split !== undefined,
        fileFormat: fileFormat as OutputFileFormat,
        jsonlTwin: ctx.values['jsonl-twin'] === true,
      });
      if (ctx.json)
        printJson(ctx, {
          input,
          files,
          rowsIn: result.rowsIn,
          train: result.train.length,
          test: result.test.length,
          problems: result.problems,
        });
      else {
        printLines(
          ctx,
          result.problems.map((p) => formatDatasetProblem(input, p)),
        );
        printLines(ctx, [
          `${result.rowsIn} row(s) read, ${result.train.length} train, ${result.test.length} test, ${result.problems.length} skipped`,
          ...files.map((f) => `wrote ${f}`),
        ]);
      }
      return result.problems.length ? 1 : 0;
    } finally {
      await done();
    }
  },
};
