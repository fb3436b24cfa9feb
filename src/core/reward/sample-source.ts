import { parquetReadObjects } from 'hyparquet';
import { openParquetFile, parquetWhy } from '../io/parquet-file';
import { errorMessage, type Problem } from '../errors/located-error';
import { readLines } from '../io/line-reader';
import { parseJsonLine, rowDepthProblem } from '../io/json-line';
import type { Host } from '../remote/host';
import type { ChatMessage, RewardSample } from '../scoring/sample';

/** Samples read from a file, with a problem (file, line, field) for every row that could not become one. */
interface LoadedSamples {
  samples: RewardSample[];
  /** For each sample, where it came from (1-based line of a JSONL file, row of a JSON or parquet file). */
  rows: number[];
  problems: Problem[];
}

function isChat(value: unknown): value is ChatMessage[] {
  return Array.isArray(value) && value.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).role === 'string');
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (isChat(value))
    return (
      value
        .filter((m) => m.role === 'assistant')
        .map((m) => String(m.content ?? ''))
        .join('\n') || undefined
    );
  return undefined;
}

/** The columns a sample is made of; a dataset row's other columns go to the function as keyword arguments. */
const SAMPLE_KEYS = new Set([
  'data_source',
  'solution_str',
  'output',
  'response',
  'completion',
  'ground_truth',
  'gts',
  'reward_model',
  'extra_info',
  'prompt',
  'input',
  'expected',
]);

const NO_SOLUTION = 'no solution';

/**
 * One row as a reward sample. Accepted shapes: keyed by verl's argument names (`data_source`, `solution_str`,
 * `ground_truth`, `extra_info`); verl rollout dump lines (`output` is the solution, `gts` the ground truth, `input` the
 * prompt, `score` the training score); dataset rows with a `response` (or TRL `completion`), the ground truth in
 * `ground_truth` or `reward_model.ground_truth`. Other columns of a dataset row go to the function as keyword arguments.
 */
export function rowToSample(row: unknown): RewardSample {
  if (!row || typeof row !== 'object' || Array.isArray(row)) throw new Error('a sample is a JSON object');
  const r = row as Record<string, unknown>;
  const dump = 'output' in r && 'gts' in r;
  const solutionKey = ['solution_str', 'output', 'response', 'completion'].find((k) => k in r);
  const solution = solutionKey === undefined ? undefined : textOf(r[solutionKey]);
  if (solution === undefined) {
    throw new Error(
      solutionKey === undefined
        ? `${NO_SOLUTION}: a sample needs solution_str, output (verl dump), response or completion (it has: ${Object.keys(r).join(', ') || 'nothing'})`
        : `${solutionKey} is not text`,
    );
  }
  const rewardModel = r.reward_model && typeof r.reward_model === 'object' ? (r.reward_model as Record<string, unknown>) : undefined;
  const groundTruth =
    'ground_truth' in r ? r.ground_truth : dump ? r.gts : rewardModel && 'ground_truth' in rewardModel ? rewardModel.ground_truth : null;
  const promptValue = r.prompt ?? (dump ? r.input : undefined);
  const prompt = typeof promptValue === 'string' || isChat(promptValue) ? promptValue : undefined;
  const extra: Record<string, unknown> = {};
  if (!dump) for (const k in r) if (!SAMPLE_KEYS.has(k)) extra[k] = r[k];
  const sample: RewardSample = {
    data_source: typeof r.data_source === 'string' ? r.data_source : '',
    solution_str: solution,
    ground_truth: groundTruth,
    extra_info: r.extra_info ?? null,
    ...(prompt !== undefined ? { prompt } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
  if (dump && typeof r.score === 'number') sample.trainingScore = r.score;
  if (typeof r.expected === 'number') sample.expected = r.expected;
  return sample;
}

/** A JSONL line longer than this is refused (file:line) without being held: a sample is text, not a data dump. */
export const MAX_SAMPLE_LINE_BYTES = 8 << 20;

/**
 * One row read from a samples file: a sample and where it came from, or why that row is not one. `index` is the row's
 * 0-based place among the file's rows (blank lines aside), rows that could not be read included: a result keeps the
 * number of its input whatever was skipped before it.
 */
export type SampleRow = { sample: RewardSample; row: number; index: number } | { problem: Problem };

/**
 * Reads samples from a JSONL, JSON (an array, or `{"samples": [...]}`) or parquet file on a host, one at a time: a JSONL
 * file line by line and a parquet file one row group at a time, so a file of millions of rows is never held whole (a JSON
 * file is one document and is read whole). A bad row is a problem naming its line (JSONL) or row; reading goes on.
 * `limit` counts rows that were read (samples and rows that could not become one).
 */
export async function* readSamples(
  host: Host,
  path: string,
  opts: { limit?: number; signal?: AbortSignal } = {},
): AsyncGenerator<SampleRow> {
  const hostLabel = host.kind === 'local' ? undefined : host.name;
  const limit = opts.limit ?? Infinity;
  if (limit <= 0) return;
  let taken = 0;
  const sampleOf = (row: unknown, n: number, index: number, where: Pick<Problem, 'line' | 'field'>): SampleRow => {
    taken++;
    const deep = rowDepthProblem(row);
    if (deep !== undefined) return { problem: { file: path, host: hostLabel, ...where, severity: 'error', message: deep } };
    try {
      return { sample: rowToSample(row), row: n, index };
    } catch (err) {
      return { problem: { file: path, host: hostLabel, ...where, severity: 'error', message: errorMessage(err) } };
    }
  };
  if (/\.jsonl$/i.test(path)) {
    let n = 0;
    let index = 0;
    for await (const line of readLines(host, path, {
      includePartial: true,
      signal: opts.signal,
      readAhead: 2,
      maxLineBytes: MAX_SAMPLE_LINE_BYTES,
    })) {
      n++;
      if (line.tooLong) {
        yield {
          problem: {
            file: path,
            host: hostLabel,
            line: n,
            severity: 'error',
            message: `this line is ${((line.end - line.start) / 2 ** 20).toFixed(1)} MiB, more than the ${MAX_SAMPLE_LINE_BYTES >> 20} MiB a sample may take: skipped`,
          },
        };
        index++;
        continue;
      }
      if (!line.text.trim()) continue;
      const parsed = parseJsonLine(line.text);
      if (parsed.error !== undefined) {
        yield { problem: { file: path, host: hostLabel, line: n, severity: 'error', message: parsed.error } };
        index++;
        continue;
      }
      yield sampleOf(parsed.value, n, index++, { line: n });
      if (taken >= limit) return;
    }
    return;
  }
  if (/\.json$/i.test(path)) {
    const { value, error } = parseJsonLine((await host.readFile(path)).toString('utf8'), Infinity);
    if (error !== undefined) {
      yield { problem: { file: path, host: hostLabel, severity: 'error', message: error } };
      return;
    }
    const list = Array.isArray(value)
      ? value
      : value && typeof value === 'object' && Array.isArray((value as { samples?: unknown }).samples)
        ? (value as { samples: unknown[] }).samples
        : undefined;
    if (!list) {
      yield { problem: { file: path, host: hostLabel, severity: 'error', message: 'expected an array of samples, or {"samples": [...]}' } };
      return;
    }
    for (let i = 0; i < list.length && taken < limit; i++) yield sampleOf(list[i], i + 1, i, { field: `[${i}]` });
    return;
  }
  if (/\.parquet$/i.test(path)) {
    const { file, metadata } = await openParquetFile(host, path);
    let rowStart = 0;
    for (const group of metadata.row_groups) {
      const rowEnd = Math.min(rowStart + Number(group.num_rows), rowStart + limit - taken);
      let objects: Record<string, unknown>[];
      try {
        objects = await parquetReadObjects({ file, metadata, rowStart, rowEnd });
      } catch (err) {
        // A damaged row group loses its own rows only.
        const message = `rows ${rowStart}-${rowEnd - 1} (a row group) cannot be decoded: ${parquetWhy(err)}`;
        yield { problem: { file: path, host: hostLabel, field: `[${rowStart}]`, severity: 'error', message } };
        taken += rowEnd - rowStart;
        if (taken >= limit) return;
        rowStart += Number(group.num_rows);
        continue;
      }
      for (const [i, row] of objects.entries())
        yield sampleOf(normaliseParquet(row), rowStart + i + 1, rowStart + i, { field: `[${rowStart + i}]` });
      if (taken >= limit) return;
      rowStart += Number(group.num_rows);
    }
    return;
  }
  throw new Error(`${path}: samples are read from .jsonl, .json or .parquet files`);
}

/** All samples of a file (readSamples, collected): for the playground and regression cases, which show them together. */
export async function loadSamples(host: Host, path: string, opts: { limit?: number; signal?: AbortSignal } = {}): Promise<LoadedSamples> {
  const out: LoadedSamples = { samples: [], rows: [], problems: [] };
  for await (const r of readSamples(host, path, opts)) {
    if ('problem' in r) out.problems.push(r.problem);
    else {
      out.samples.push(r.sample);
      out.rows.push(r.row);
    }
  }
  return out;
}

/**
 * What a user reads after loading a file as samples: its problems, except when not one row had an answer to score (a
 * training dataset's rows are prompts): then one sentence that says so and where answers come from, not a line per row.
 */
export function sampleProblemLines(
  file: string,
  loaded: Pick<LoadedSamples, 'samples' | 'problems'>,
  format: (p: Problem) => string,
): string[] {
  const noAnswer = loaded.problems.filter((p) => p.message.startsWith(NO_SOLUTION)).length;
  if (loaded.samples.length > 0 || noAnswer === 0 || noAnswer < loaded.problems.length) return loaded.problems.map(format);
  return [
    `${file}: its ${noAnswer} row(s) are prompts with no answer to score (no solution_str, output, response or completion). ` +
      `Score a run's answers with "MedRL: Back-test a Reward Function on a Run's Rollouts", load a rollout dump, or add a sample by hand.`,
  ];
}

/** Parquet values JSON cannot hold (bigint, typed arrays) as plain values. */
function normaliseParquet(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(normaliseParquet);
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (value && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normaliseParquet(v)]));
  return value;
}
