import { parquetReadObjects } from 'hyparquet';
import type { Problem } from '../errors/located-error';
import { readLines } from '../io/line-reader';
import type { Host } from '../remote/host';
import type { ChatMessage, RewardSample } from './types';

/** Samples read from a file, with a problem (file, line, field) for every row that could not become one. */
export interface LoadedSamples {
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
  if (isChat(value)) return value.filter((m) => m.role === 'assistant').map((m) => String(m.content ?? '')).join('\n') || undefined;
  return undefined;
}

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
    throw new Error(solutionKey === undefined
      ? `no solution: a sample needs solution_str, output (verl dump), response or completion (it has: ${Object.keys(r).join(', ') || 'nothing'})`
      : `${solutionKey} is not text`);
  }
  const rewardModel = r.reward_model && typeof r.reward_model === 'object' ? (r.reward_model as Record<string, unknown>) : undefined;
  const groundTruth = 'ground_truth' in r ? r.ground_truth : dump ? r.gts : rewardModel && 'ground_truth' in rewardModel ? rewardModel.ground_truth : null;
  const promptValue = r.prompt ?? (dump ? r.input : undefined);
  const prompt = typeof promptValue === 'string' || isChat(promptValue) ? promptValue : undefined;
  const used = new Set(['data_source', 'solution_str', 'output', 'response', 'completion', 'ground_truth', 'gts', 'reward_model', 'extra_info', 'prompt', 'input', 'expected']);
  const extra: Record<string, unknown> = {};
  if (!dump) for (const [k, v] of Object.entries(r)) if (!used.has(k)) extra[k] = v;
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

function collect(rows: Iterable<[number, unknown]>, file: string, host: string | undefined, lineLabel: 'line' | 'row'): LoadedSamples {
  const out: LoadedSamples = { samples: [], rows: [], problems: [] };
  for (const [n, row] of rows) {
    try {
      out.samples.push(rowToSample(row));
      out.rows.push(n);
    } catch (err) {
      out.problems.push({ file, host, ...(lineLabel === 'line' ? { line: n } : { field: `[${n - 1}]` }), severity: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}

/**
 * Reads samples from a JSONL, JSON (an array, or `{"samples": [...]}`) or parquet file on a host. A bad line is a
 * problem with its line number; the other lines are still read.
 */
export async function loadSamples(host: Host, path: string, opts: { limit?: number; signal?: AbortSignal } = {}): Promise<LoadedSamples> {
  const hostLabel = host.kind === 'local' ? undefined : host.name;
  const limit = opts.limit ?? Infinity;
  if (/\.jsonl$/i.test(path)) {
    const problems: Problem[] = [];
    const rows: Array<[number, unknown]> = [];
    let n = 0;
    for await (const line of readLines(host, path, { includePartial: true, signal: opts.signal })) {
      n++;
      if (!line.text.trim()) continue;
      try {
        rows.push([n, JSON.parse(line.text)]);
      } catch (err) {
        problems.push({ file: path, host: hostLabel, line: n, severity: 'error', message: `not JSON: ${err instanceof Error ? err.message : String(err)}` });
      }
      if (rows.length >= limit) break;
    }
    const loaded = collect(rows, path, hostLabel, 'line');
    return { ...loaded, problems: [...problems, ...loaded.problems].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)) };
  }
  if (/\.json$/i.test(path)) {
    let value: unknown;
    try {
      value = JSON.parse((await host.readFile(path)).toString('utf8'));
    } catch (err) {
      if (err instanceof SyntaxError) return { samples: [], rows: [], problems: [{ file: path, host: hostLabel, severity: 'error', message: `not JSON: ${err.message}` }] };
      throw err;
    }
    const list = Array.isArray(value) ? value : value && typeof value === 'object' && Array.isArray((value as { samples?: unknown }).samples) ? (value as { samples: unknown[] }).samples : undefined;
    if (!list) return { samples: [], rows: [], problems: [{ file: path, host: hostLabel, severity: 'error', message: 'expected an array of samples, or {"samples": [...]}' }] };
    return collect(list.slice(0, limit).map((row, i) => [i + 1, row] as [number, unknown]), path, hostLabel, 'row');
  }
  if (/\.parquet$/i.test(path)) {
    const { size } = await host.stat(path);
    const file = {
      byteLength: size,
      slice: async (start: number, end?: number) => {
        const buf = await host.readFile(path, { start, end: end ?? size });
        return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
      },
    };
    const objects = await parquetReadObjects({ file, rowEnd: Number.isFinite(limit) ? limit : undefined });
    return collect(objects.map((row, i) => [i + 1, normaliseParquet(row)] as [number, unknown]), path, hostLabel, 'row');
  }
  throw new Error(`${path}: samples are read from .jsonl, .json or .parquet files`);
}

/** Parquet values JSON cannot hold (bigint, typed arrays) as plain values. */
function normaliseParquet(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(normaliseParquet);
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (value && typeof value === 'object' && !(value instanceof Date)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normaliseParquet(v)]));
  return value;
}
