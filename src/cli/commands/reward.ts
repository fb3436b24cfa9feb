import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command, CommandContext } from '../command';
import { UsageError, printError, printJson, printLines } from '../command';
import { cliHostPool, openWorkspace } from '../host-pool';
import { requireTrust } from '../workspace-trust';
import { findHost, LOCAL_HOST, type WorkspaceConfig } from '../../core/config/workspace-config';
import { errorMessage, formatProblem, type Problem } from '../../core/errors/located-error';
import type { HostPool } from '../../core/remote/host-pool';
import { LocalHost } from '../../core/remote/local-host';
import { JUDGE_ENV, judgeEnv, openJudge, pickJudge, type OpenedJudge } from '../../core/judge/judges';
import { parseScoreSpec } from '../../core/scoring/score-parser';
import { batchDeadline } from '../../core/judge/judge-scorer';
import { terminalText } from '../../core/format/terminal-text';
import { loadSamples, readSamples, type SampleRow } from '../../core/reward/sample-source';
import { FunctionScorer, JudgeSamplesScorer, parseFunctionSpec, type Scorer } from '../../core/reward/scorers';
import { checkCases, loadCases } from '../../core/reward/cases';
import { compareWithTraining, loadRollouts } from '../../core/reward/backtest';
import type { RewardSample, ScoreResult } from '../../core/scoring/sample';

/** The judge cache of the CLI: $XDG_CACHE_HOME/medrl/judge. */
export function judgeCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'medrl', 'judge');
}

function intOption(ctx: CommandContext, name: string, fallback: number): number {
  const raw = ctx.values[name] as string | undefined;
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, not "${raw}"`);
  return n;
}

export function numberOption(ctx: CommandContext, name: string, fallback: number): number {
  const raw = ctx.values[name] as string | undefined;
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number, not "${raw}"`);
  return n;
}

interface Session {
  file?: string;
  config?: WorkspaceConfig;
  pool: HostPool;
  judge?: OpenedJudge;
  close(): Promise<void>;
}

/**
 * The workspace when there is one (needed for --host and --judge), else only the local host. A judge is opened when
 * --judge names one, or (`requireJudge`) the workspace's default judge.
 */
async function openSession(ctx: CommandContext, opts: { needsWorkspace: boolean; requireJudge?: boolean }): Promise<Session> {
  const configArg = ctx.values.config as string | undefined;
  const judgeName = ctx.values.judge as string | undefined;
  const needsWorkspace = opts.needsWorkspace || opts.requireJudge || judgeName !== undefined;
  let file: string | undefined;
  let config: WorkspaceConfig | undefined;
  let pool: HostPool;
  if (needsWorkspace || configArg !== undefined || existsSync(join(ctx.cwd, 'medrl.yaml')))
    ({ file, config, pool } = await openWorkspace(ctx.cwd, configArg));
  else pool = cliHostPool(undefined);
  let judge: OpenedJudge | undefined;
  if (config && (judgeName !== undefined || opts.requireJudge)) {
    const [name, cfg] = pickJudge(config, judgeName);
    const maxConcurrency = ctx.values.concurrency === undefined ? cfg.maxConcurrency : intOption(ctx, 'concurrency', 1);
    judge = await openJudge(
      name,
      { ...cfg, maxConcurrency },
      { pool, apiKey: process.env[JUDGE_ENV.apiKey], cacheDir: ctx.values['no-cache'] ? undefined : judgeCacheDir() },
    );
  }
  return {
    file,
    config,
    pool,
    judge,
    close: async () => {
      await judge?.close();
      await pool.dispose();
    },
  };
}

async function functionScorer(ctx: CommandContext, s: Session): Promise<FunctionScorer> {
  const spec = parseFunctionSpec(ctx.values.fn as string);
  const hostName = (ctx.values.host as string | undefined) ?? LOCAL_HOST;
  const hostEntry = findHost(s.config, hostName);
  // The worker runs after a remote host's setup lines (scorers.ts); the function itself is the file named here.
  if (hostName !== LOCAL_HOST) await requireTrust(s.file, `Running ${spec.path} on ${hostName}`, hostEntry);
  const host = await s.pool.get(hostName);
  const scorer = new FunctionScorer({
    host,
    hostEntry,
    localPath: resolve(ctx.cwd, spec.path),
    name: spec.name,
    env: s.judge ? judgeEnv(s.judge, host) : undefined,
    timeoutMs: numberOption(ctx, 'timeout', 30) * 1000,
    workers: intOption(ctx, 'concurrency', 1),
  });
  const info = await scorer.info();
  if (!info.ok) {
    scorer.dispose();
    throw new Error(`${info.error}${info.traceback ? `\n${info.traceback.trimEnd()}` : ''}`);
  }
  return scorer;
}

/**
 * Runs `work` with the workspace session and a scorer for --fn that starts on first use (after the samples are read, so
 * a bad samples file fails before any worker starts); both are closed afterwards.
 */
async function withFunction(
  ctx: CommandContext,
  work: (s: Session, scorer: () => Promise<FunctionScorer>) => Promise<number>,
): Promise<number> {
  const hostName = (ctx.values.host as string | undefined) ?? LOCAL_HOST;
  const s = await openSession(ctx, { needsWorkspace: hostName !== LOCAL_HOST });
  let scorer: FunctionScorer | undefined;
  try {
    return await work(s, async () => (scorer ??= await functionScorer(ctx, s)));
  } finally {
    scorer?.dispose();
    await s.close();
  }
}

function printProblems(ctx: CommandContext, problems: Problem[]): void {
  for (const p of problems) printError(ctx, formatProblem(p));
}

function sampleLine(r: ScoreResult): Record<string, unknown> {
  return { index: r.index, score: r.score, detail: r.detail, error: r.error, ...(r.raw !== undefined ? { raw: r.raw } : {}) };
}

/** The summary line of a run, counted as results go by (a streamed run keeps none). */
class Tally {
  samples = 0;
  scored = 0;
  sum = 0;
  errors = 0;

  add(r: ScoreResult): void {
    this.samples++;
    if (r.score !== null) {
      this.scored++;
      this.sum += r.score;
    }
    if (r.error) this.errors++;
  }

  static of(results: ScoreResult[]): Tally {
    const t = new Tally();
    for (const r of results) t.add(r);
    return t;
  }

  toString(): string {
    return `${this.samples} samples, ${this.scored} scored (mean ${this.scored ? (this.sum / this.scored).toFixed(4) : '-'}), ${this.errors} errors`;
  }
}

/** A result as a table row: index and score columns, then `tail` (the error, or what the judge answered). */
function scoreRow(r: ScoreResult, tail: string): string {
  return `${String(r.index).padStart(5)}  ${r.score === null ? '    -' : r.score.toFixed(4).padStart(8)}  ${tail}`;
}

/** One streamed result: a JSON line, or a table row made safe for the terminal as printLines makes its lines. */
function resultLine(r: ScoreResult, json: boolean): string {
  return json ? JSON.stringify(sampleLine(r)) : terminalText(scoreRow(r, r.error ?? ''));
}

/** Writes lines in blocks, waiting while the output is full: a million results never pile up in a pipe's buffer. */
class LineWriter {
  private block = '';

  constructor(private readonly out: NodeJS.WritableStream) {}

  async line(text: string): Promise<void> {
    this.block += `${text}\n`;
    if (this.block.length >= 1 << 16) await this.flush();
  }

  async flush(): Promise<void> {
    const block = this.block;
    this.block = '';
    if (block && !this.out.write(block)) await once(this.out, 'drain');
  }
}

const common = {
  config: { type: 'string', short: 'c' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
} as const;

export const rewardRunCommand: Command = {
  path: ['reward', 'run'],
  summary: 'Score samples with a reward function (verl or TRL signature) in a persistent python3 worker',
  usage:
    'medrl reward run --fn FILE.py[:NAME] --samples FILE.jsonl [--judge NAME] [--concurrency N] [--host H] [--timeout S] [--limit N] [--json]',
  details: [
    "Samples: JSONL, JSON or parquet rows keyed by the function's argument names (data_source, solution_str, ground_truth,",
    'extra_info), verl rollout dump lines (output, gts) or dataset rows with a response. --json prints one JSON object per',
    'sample, in input order: {index, score, detail, error}. --judge NAME gives the function MEDRL_JUDGE_URL/MODEL/API_KEY',
    '(the key from the environment variable MEDRL_JUDGE_API_KEY). --concurrency N runs N workers; --timeout S per call (30).',
    'Rows are streamed (read, scored and printed as they go, in bounded memory); a JSONL line over 8 MiB is refused.',
    "index is the row's place in the file from 0 (blank lines aside): a row that could not be read keeps its number.",
    'Exit code 1 when a sample has an error or a row could not be read.',
  ].join('\n'),
  options: {
    ...common,
    fn: { type: 'string' },
    samples: { type: 'string' },
    judge: { type: 'string' },
    host: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(ctx) {
    if (!ctx.values.fn || !ctx.values.samples) throw new UsageError('--fn and --samples are required');
    const limit = ctx.values.limit ? intOption(ctx, 'limit', 1) : undefined;
    return withFunction(ctx, async (_s, scorer) => {
      // Streamed: rows are read, scored and printed as they go, so memory does not grow with the file (a million rows).
      const rows = readSamples(new LocalHost(), resolve(ctx.cwd, ctx.values.samples as string), { limit });
      let problems = 0;
      // Each sample's place in the file, in the order results come back: a skipped row never renumbers the ones after it.
      const indices: number[] = [];
      async function* samples(first: IteratorResult<SampleRow>): AsyncGenerator<RewardSample> {
        for (let r = first; !r.done; r = await rows.next()) {
          if ('problem' in r.value) {
            problems++;
            printProblems(ctx, [r.value.problem]);
          } else {
            indices.push(r.value.index);
            yield r.value.sample;
          }
        }
      }
      // The first row is read before the worker starts: a samples file that cannot be read fails first.
      const source = samples(await rows.next());
      const out = new LineWriter(ctx.stdout);
      const tally = new Tally();
      for await (const scored of (await scorer()).stream(source)) {
        const r = { ...scored, index: indices.shift()! };
        tally.add(r);
        await out.line(resultLine(r, ctx.json));
      }
      await out.flush();
      if (!ctx.json) ctx.stderr.write(`${tally}\n`);
      return problems || tally.errors ? 1 : 0;
    });
  },
};

export const rewardCasesCommand: Command = {
  path: ['reward', 'cases'],
  summary: 'Re-run the regression cases kept next to a reward function (FILE.cases.jsonl)',
  usage: 'medrl reward cases --fn FILE.py[:NAME] [--judge NAME] [--host H] [--json]',
  details:
    'Each line of FILE.cases.jsonl is a sample with "expected"; a case passes when the function gives that score. Exit code 1 when one fails.',
  options: { ...common, fn: { type: 'string' }, judge: { type: 'string' }, host: { type: 'string' } },
  async run(ctx) {
    if (!ctx.values.fn) throw new UsageError('--fn is required');
    return withFunction(ctx, async (_s, scorer) => {
      const { path, cases, problems } = await loadCases(new LocalHost(), resolve(ctx.cwd, parseFunctionSpec(ctx.values.fn as string).path));
      printProblems(ctx, problems);
      const outcomes = checkCases(cases, await (await scorer()).run(cases));
      if (ctx.json)
        printJson(ctx, {
          file: path,
          passed: outcomes.filter((o) => o.pass).length,
          failed: outcomes.filter((o) => !o.pass).length,
          cases: outcomes,
        });
      else
        printLines(ctx, [
          ...outcomes.map(
            (o) =>
              `${o.pass ? 'pass' : 'FAIL'}  case ${o.index + 1}: expected ${o.expected}, got ${o.score ?? '-'}${o.error ? ` (${o.error})` : ''}`,
          ),
          `${outcomes.filter((o) => o.pass).length}/${outcomes.length} cases pass (${path})`,
        ]);
      return problems.length || outcomes.some((o) => !o.pass) ? 1 : 0;
    });
  },
};

export const rewardBacktestCommand: Command = {
  path: ['reward', 'backtest'],
  summary: "Score a past run's rollout dumps with a reward function and compare with the scores from training",
  usage: 'medrl reward backtest --run DIR --fn FILE.py[:NAME] [--host H] [--steps 1,5] [--limit N] [--threshold T] [--judge NAME] [--json]',
  details:
    "Reads <run dir>/rollouts/*.jsonl (verl dumps: output, gts, score) on the run's host (--host, default local); the function runs there too.\nPrints agreement (Pearson r, Cohen's kappa on pass/fail at --threshold, default 0.5) and the samples whose score changed.\nA dump line that cannot be read is reported with its file and line, counted (--json: skipped) and makes the exit code 1.",
  options: {
    ...common,
    run: { type: 'string' },
    fn: { type: 'string' },
    host: { type: 'string' },
    steps: { type: 'string' },
    limit: { type: 'string' },
    threshold: { type: 'string' },
    judge: { type: 'string' },
  },
  async run(ctx) {
    if (!ctx.values.run || !ctx.values.fn) throw new UsageError('--run and --fn are required');
    const hostName = (ctx.values.host as string | undefined) ?? LOCAL_HOST;
    return withFunction(ctx, async (s, scorer) => {
      const host = await s.pool.get(hostName);
      const dir = host.kind === 'local' ? resolve(ctx.cwd, ctx.values.run as string) : (ctx.values.run as string);
      const steps = ctx.values.steps ? (ctx.values.steps as string).split(',').map((x) => Number(x)) : undefined;
      if (steps?.some((x) => !Number.isInteger(x))) throw new UsageError('--steps is a comma-separated list of step numbers');
      const rollouts = await loadRollouts(
        host,
        { host: hostName, dir },
        { steps, limit: ctx.values.limit ? intOption(ctx, 'limit', 1) : undefined },
      );
      printProblems(ctx, rollouts.problems);
      if (!rollouts.samples.length) throw new Error(`${dir}/rollouts has no samples${steps ? ` for steps ${steps.join(', ')}` : ''}`);
      const results = await (await scorer()).run(rollouts.samples);
      const report = compareWithTraining(rollouts, results, { threshold: numberOption(ctx, 'threshold', 0.5) });
      // Lines that could not be read are rollouts missing from the comparison: said in the summary, and the exit code.
      const skipped = rollouts.problems.filter((p) => p.severity === 'error').length;
      if (ctx.json) printJson(ctx, { ...report, skipped });
      else {
        const a = report.agreement;
        const f = (x: number | null, d = 3) => (x === null ? '-' : x.toFixed(d));
        printLines(ctx, [
          `${report.total} rollouts, ${report.scored} scored, ${report.errors} errors${skipped ? `, ${skipped} ${skipped === 1 ? 'line' : 'lines'} skipped (could not be read: listed above)` : ''}`,
          `mean score: training ${f(report.meanTraining, 4)}, now ${f(report.meanNew, 4)}`,
          `agreement: pearson ${f(a.pearson)}, kappa ${f(a.kappa)} (pass >= ${a.threshold}), same pass/fail ${a.agreement === null ? '-' : `${(a.agreement * 100).toFixed(1)}%`} of ${a.n}`,
          `${report.changed.length} changed:`,
          ...report.changed
            .slice(0, 20)
            .map((c) => `  step ${c.step} ${c.file}:${c.line}  ${c.training} -> ${c.now ?? '-'}${c.error ? `  (${c.error})` : ''}`),
        ]);
      }
      return report.errors || skipped ? 1 : 0;
    });
  },
};

export const judgeRunCommand: Command = {
  path: ['judge', 'run'],
  summary: 'Score samples with an LLM judge from medrl.yaml (prompt template, score parser, retries, cache)',
  usage:
    'medrl judge run --samples FILE.jsonl [--judge NAME] [--prompt TEMPLATE] [--parse SPEC] [--concurrency N] [--no-cache] [--limit N] [--deadline SECONDS] [--json]',
  details:
    "The prompt template and parser default to the judge's prompt:/parse: in medrl.yaml. --parse: number, json:FIELD, regex:PATTERN,\nlabel:correct=1,incorrect=0. The API key comes from MEDRL_JUDGE_API_KEY. --deadline: the whole batch ends within SECONDS; rows not\nanswered by then are errors that name the deadline. --json: one object per sample {index, score, detail, error, raw}.",
  options: {
    config: { type: 'string', short: 'c' },
    samples: { type: 'string' },
    judge: { type: 'string' },
    prompt: { type: 'string' },
    parse: { type: 'string' },
    concurrency: { type: 'string' },
    'no-cache': { type: 'boolean' },
    limit: { type: 'string' },
    deadline: { type: 'string' },
  },
  async run(ctx) {
    if (!ctx.values.samples) throw new UsageError('--samples is required');
    const s = await openSession(ctx, { needsWorkspace: true, requireJudge: true });
    try {
      const judge = s.judge!;
      let parser = judge.scorer.parser;
      try {
        if (ctx.values.parse) parser = parseScoreSpec(ctx.values.parse as string);
      } catch (err) {
        throw new UsageError(errorMessage(err));
      }
      const scorer: Scorer = new JudgeSamplesScorer(judge.name, {
        ...judge.scorer,
        template: (ctx.values.prompt as string | undefined) ?? judge.scorer.template,
        parser,
      });
      const loaded = await loadSamples(new LocalHost(), resolve(ctx.cwd, ctx.values.samples as string), {
        limit: ctx.values.limit ? intOption(ctx, 'limit', 1) : undefined,
      });
      printProblems(ctx, loaded.problems);
      const deadline = ctx.values.deadline === undefined ? undefined : batchDeadline(intOption(ctx, 'deadline', 1) * 1000);
      const results = await scorer.run(loaded.samples, { deadline });
      const p = judge.scorer.client.params;
      if (ctx.json)
        printLines(
          ctx,
          results.map((r) => JSON.stringify({ ...sampleLine(r), raw: r.raw ?? null, attempts: r.attempts, cached: r.cached })),
        );
      else {
        printLines(
          ctx,
          results.map((r) => scoreRow(r, r.error ?? JSON.stringify(r.raw ?? '').slice(0, 100))),
        );
        ctx.stderr.write(
          `${Tally.of(results)}; judge ${judge.name} (${judge.scorer.client.endpoint.model}, temperature ${p.temperature}${p.seed === undefined ? '' : `, seed ${p.seed}`})\n`,
        );
      }
      return loaded.problems.length || results.some((r) => r.error) ? 1 : 0;
    } finally {
      await s.close();
    }
  },
};
