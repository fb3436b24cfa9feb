import { basename, posix } from 'node:path';
import { errorMessage, type Location, type Problem } from '../errors/located-error';
import type { Host } from '../remote/host';
import { openDataset } from '../datasets/open-dataset';
import { datasetFormatOf, readRows, type DatasetRecord } from '../datasets/dataset-reader';
import { RewardWorker } from '../reward/reward-worker';
import { functionFilesOn, harnessOn } from '../reward/staging';
import type { RewardSample, ScoreResult } from '../scoring/sample';
import type { FunctionInfo } from '../reward/types';
import { JUDGE_ENV } from '../judge/judges';
import type { RunSpec } from './run-spec';
import type { RewardUpload } from './reward-files';

export interface ContractInputs {
  host: Host;
  spec: RunSpec;
  specFile: string;
  /** The reward function's files, as prepareRun read them for upload. */
  upload: RewardUpload;
  /** The first training data file on the host (rows are read from it with range reads); none: nothing is tried (the
   *  host checks report the missing file). */
  dataPath?: string;
  /** The run's working folder and setup lines: the worker runs where and as the trainer would. */
  workdir: string;
  setup: string[];
  /** The run's environment (judge URL and model among it) and secrets (the judge key): sent over stdin, never argv. */
  env: Record<string, string>;
  secrets: Record<string, string>;
  /** Dataset rows to try (default 8); each is scored twice: with its ground truth as the answer, and with an empty one. */
  rows?: number;
  /** Time for the whole check, the worker's start included (default 30 s). */
  budgetMs?: number;
  /** Time for one call (default 10 s). */
  callMs?: number;
}

/** A tried sample: the row it came from and which made-up answer it got (never the row's text: it is medical data). */
interface Trial {
  row: DatasetRecord;
  answer: 'ground truth' | 'empty' | 'completion';
}

/**
 * The file whose rows are tried: the path itself, or for a folder (TRL's --dataset_name, which `datasets` loads by
 * file extension) its first data file, one named for the train split first.
 */
async function firstDataFile(host: Host, path: string): Promise<string> {
  if ((await host.stat(path)).kind !== 'directory') return path;
  const files = (await host.readdir(path))
    .filter((e) => e.kind === 'file' && datasetFormatOf(e.name))
    .map((e) => e.name)
    .sort();
  const pick = files.find((f) => /train/i.test(f)) ?? files[0];
  if (!pick) throw new Error(`${host.name}:${path}: a folder with no .json, .jsonl, .parquet or .csv file`);
  return posix.join(path, pick);
}

/**
 * Runs the spec's reward function on a few rows of its training data in one playground worker on the run's host and
 * returns what verl or TRL would crash on, each naming the row and the fix: a failing load, a signature the trainer
 * cannot call, exceptions, None (verl), a dict without `score`, extra keys or value types that differ between samples,
 * dicts (TRL). Problems never quote row text or what the function printed.
 */
export async function checkRewardContract(inp: ContractInputs): Promise<Problem[]> {
  const { spec } = inp;
  if (!spec.reward || !('path' in spec.reward)) return [];
  const budget = inp.budgetMs ?? 30_000;
  const started = Date.now();
  const rewardAt = { file: inp.specFile, field: 'reward.path' };
  // A check that could not run is a warning at what stopped it (the data, the setup lines): the host checks say more.
  const skipped = (why: string, field = 'data.train'): Problem[] => [
    { file: inp.specFile, field, severity: 'warning', message: `the reward function was not tried on the data before submit: ${why}` },
  ];
  if (!inp.dataPath) return [];
  let records: DatasetRecord[];
  let dataFile: string;
  try {
    dataFile = await firstDataFile(inp.host, inp.dataPath);
    records = await readRows(await openDataset(inp.host, dataFile), 0, inp.rows ?? 8);
  } catch (err) {
    return skipped(errorMessage(err));
  }
  const dataAt = (r: DatasetRecord): Location => ({
    file: dataFile,
    ...(inp.host.kind === 'local' ? {} : { host: inp.host.name }),
    ...(r.line ? { line: r.line } : {}),
    field: `row ${r.index + 1}`,
  });
  const problems: Problem[] = [];
  const trials: Trial[] = [];
  const samples: RewardSample[] = [];
  for (const r of records) {
    const made = spec.framework === 'verl' ? verlSamples(r) : trlSamples(r);
    if (typeof made === 'string') problems.push({ ...dataAt(r), severity: 'error', message: made });
    else
      for (const [answer, sample] of made) {
        trials.push({ row: r, answer });
        samples.push(sample);
      }
  }
  if (!samples.length) return [...problems, ...(records.length ? [] : skipped(`${dataFile} has no rows`))];

  const { upload } = inp;
  const worker = new RewardWorker({
    host: inp.host,
    harnessPath: await harnessOn(inp.host),
    fnPath: await functionFilesOn(inp.host, upload.local[upload.main]!, upload.local),
    name: spec.reward.function,
    env: { ...inp.env, ...inp.secrets },
    cwd: inp.workdir,
    setup: inp.setup,
    timeoutMs: inp.callMs ?? 10_000,
    graceMs: 2000,
  });
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), Math.max(0, budget - (Date.now() - started)));
  try {
    const loading = worker.start().then(
      (info) => ({ info }),
      (err: unknown) => ({ failed: errorMessage(err) }),
    );
    const late = new Promise<undefined>((done) => stop.signal.addEventListener('abort', () => done(undefined), { once: true }));
    const loaded = await Promise.race([loading, late]);
    if (!loaded) return [...problems, ...skipped(`the worker did not load it within ${budget / 1000} s`, 'reward.path')];
    // The worker did not start (the run's setup lines or python3 failed): the host checks say why.
    if ('failed' in loaded) return [...problems, ...skipped(loaded.failed, 'setup')];
    const { info } = loaded;
    if (!info.ok)
      return [
        ...problems,
        {
          ...rewardAt,
          severity: 'error',
          message: `${info.error ?? 'it does not load'}: the trainer imports it the same way, so the run would fail at its first step`,
        },
      ];
    const signature = signatureProblem(spec, info, samples);
    if (signature) return [...problems, { file: inp.specFile, field: 'reward.function', severity: 'error', message: signature }];
    const outcome = await worker.runBatch(samples, { signal: stop.signal, careful: true });
    problems.push(...resultProblems(spec.framework, outcome.results, trials, dataAt, inp.env[JUDGE_ENV.url] !== undefined));
    if (outcome.why === 'cancelled') {
      problems.push({
        ...rewardAt,
        severity: 'warning',
        message: `tried ${outcome.results.length} of ${samples.length} samples: the check's ${budget / 1000} s ran out`,
      });
    } else if (outcome.stoppedAt !== undefined) {
      // The worker died or hung past its alarm on this sample; its stderr may quote the row, so only how it ended is said.
      const trial = trials[outcome.stoppedAt]!;
      const how = /timed out|killed by \w+|exited with code -?\d+|lost|cannot be read/.exec(outcome.why ?? '')?.[0] ?? 'stopped';
      problems.push({
        ...dataAt(trial.row),
        severity: 'error',
        message: `with ${answerName(trial)}, the reward worker ${how === 'timed out' ? 'hung past its timeout (a call Python could not interrupt)' : `stopped (${how})`}: this would stop the trainer too; try the row in the reward playground`,
      });
    }
    return problems;
  } finally {
    clearTimeout(timer);
    worker.kill();
  }
}

/** The reader's note on a malformed row may quote it (JSON.parse does), so it is not repeated. */
const UNREADABLE = 'cannot be read as a row (the dataset view shows why); the trainer cannot read it either';

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** verl parquet rows (verl/utils/dataset/rl_dataset.py): data_source, prompt, reward_model.ground_truth, extra_info. */
function verlSamples(r: DatasetRecord): Array<[Trial['answer'], RewardSample]> | string {
  if (r.error) return UNREADABLE;
  const v = r.value as Record<string, unknown> | undefined;
  const rm = v && typeof v === 'object' ? (v.reward_model as Record<string, unknown> | undefined) : undefined;
  if (!rm || typeof rm !== 'object' || !('ground_truth' in rm)) {
    return `has no reward_model.ground_truth: verl's reward manager reads data.non_tensor_batch["reward_model"]["ground_truth"] for every sample (verl/workers/reward_manager/naive.py); convert the data to verl's format`;
  }
  const base = {
    data_source: typeof v!.data_source === 'string' ? v!.data_source : '',
    ground_truth: rm.ground_truth,
    extra_info: v!.extra_info ?? null,
  };
  return [
    ['ground truth', { ...base, solution_str: textOf(rm.ground_truth) }],
    ['empty', { ...base, solution_str: '' }],
  ];
}

/** TRL rows: `prompt` and the other columns, which TRL passes to reward functions as keyword lists (grpo_trainer.py). */
function trlSamples(r: DatasetRecord): Array<[Trial['answer'], RewardSample]> | string {
  if (r.error) return UNREADABLE;
  const v = r.value;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'is not an object with columns';
  const { prompt, completion, ...columns } = v as Record<string, unknown>;
  const base = {
    data_source: '',
    ground_truth: columns.ground_truth ?? null,
    ...(typeof prompt === 'string' || Array.isArray(prompt) ? { prompt: prompt as RewardSample['prompt'] } : {}),
    ...(Object.keys(columns).length ? { extra: columns } : {}),
  };
  const out: Array<[Trial['answer'], RewardSample]> = [];
  if (completion !== undefined) {
    const text = Array.isArray(completion)
      ? completion.map((m) => String((m as { content?: unknown }).content ?? '')).join('\n')
      : textOf(completion);
    out.push(['completion', { ...base, solution_str: text }]);
  } else if (columns.ground_truth !== undefined) out.push(['ground truth', { ...base, solution_str: textOf(columns.ground_truth) }]);
  out.push(['empty', { ...base, solution_str: '' }]);
  return out;
}

/** What the trainer passes by keyword that the function cannot take, or a parameter it needs that the trainer never passes. */
function signatureProblem(spec: RunSpec, info: FunctionInfo, samples: RewardSample[]): string | undefined {
  const name = info.name ?? 'the function';
  if (info.kind !== spec.framework) {
    return info.kind === 'trl'
      ? `${name} is a TRL reward function (prompts, completions, **kwargs) but the spec trains with verl, which calls compute_score(data_source, solution_str, ground_truth, extra_info) by keyword`
      : `${name} is a verl reward function (data_source, solution_str, ground_truth, extra_info) but the spec trains with TRL, which calls f(prompts=..., completions=..., **columns)`;
  }
  const params = new Set(info.params ?? []);
  // verl: the reward manager's call (verl/workers/reward_manager/naive.py); TRL 1.10: GRPOTrainer._calculate_rewards
  // passes prompts, completions, completion_ids, every column but prompt/completion, trainer_state, log_extra, log_metric.
  const passed =
    spec.framework === 'verl'
      ? ['data_source', 'solution_str', 'ground_truth', 'extra_info']
      : [
          'prompts',
          'completions',
          'completion_ids',
          ...new Set(samples.flatMap((s) => Object.keys(s.extra ?? {}))),
          'trainer_state',
          'log_extra',
          'log_metric',
        ];
  const refused = info.varKw ? [] : passed.filter((p) => !params.has(p));
  if (refused.length) {
    const want =
      spec.framework === 'verl'
        ? 'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs)'
        : `def ${name}(prompts, completions, **kwargs)`;
    return `${name} does not take ${refused.join(', ')}, which ${spec.framework} passes by keyword: the call would fail with a TypeError. Declare it as ${want}`;
  }
  const missing = (info.required ?? []).filter((p) => !passed.includes(p));
  if (missing.length)
    return `${name} needs ${missing.join(', ')}, which ${spec.framework} never passes: give ${missing.length > 1 ? 'them defaults' : 'it a default'}`;
  return undefined;
}

/** Exceptions whose messages speak of code (names, keys, types); other messages may quote row text and are not shown. */
const CODE_ERRORS =
  /^(KeyError|IndexError|AttributeError|NameError|UnboundLocalError|ImportError|ModuleNotFoundError|TypeError|ZeroDivisionError|RecursionError|AssertionError): /;

/** The worker's note on a failed sample as a message without row text, with the reward file's line it came from. */
function describeError(error: string, traceback: string | null | undefined): string {
  const frames = [...(traceback ?? '').matchAll(/File "([^"]+)", line (\d+)/g)].filter((m) => !m[1]!.endsWith('reward_worker.py'));
  const at = frames.length ? ` at ${basename(frames[frames.length - 1]![1]!)}:${frames[frames.length - 1]![2]}` : '';
  if (error.startsWith('timed out'))
    return `${error} on one sample: verl and TRL wait for every call, so one slow sample stalls the step; bound the work (a judge call's timeout)`;
  if (error.startsWith('called exit')) return `${error}: a reward function must return a score, not end the process`;
  const trl = /^TypeError: returned (\w+) .*a TRL reward function returns a list/.exec(error);
  if (trl)
    return `returned ${trl[1] === 'list' || trl[1] === 'tuple' ? `a ${trl[1]} of another length than the completions` : `a ${trl[1]}`}: TRL calls it with a batch and needs a list with one float (or None) per completion (trl/trainer/grpo_trainer.py _calculate_rewards)`;
  const returned = /^TypeError: returned (a dict without 'score'.*|a non-finite score.*|(\w+))/.exec(error);
  if (returned) {
    const what = returned[2] ? `${returned[2] === 'NoneType' ? 'None' : `a ${returned[2]}`}` : returned[1];
    return `returned ${what}: return a float, or a dict whose "score" is a float, for every sample (verl reads result["score"] and puts it in a float tensor)`;
  }
  if (CODE_ERRORS.test(error))
    return `raised ${error.split('\n')[0]!.slice(0, 300)}${at}: the trainer stops on an exception in the reward function; handle this input`;
  const type = /^(\w+(?:\.\w+)*)[:\s]/.exec(error)?.[1] ?? 'an exception';
  return `raised ${type}${at} (its message is not shown: it may quote the row; try the row in the reward playground): the trainer stops on an exception in the reward function; handle this input`;
}

/** Problems in the samples' results, one per distinct problem at its first row, listing the other rows. */
function resultProblems(
  framework: RunSpec['framework'],
  results: ScoreResult[],
  trials: Trial[],
  dataAt: (r: DatasetRecord) => Location,
  judgeSet: boolean,
): Problem[] {
  const found = new Map<string, { severity: Problem['severity']; trials: Trial[] }>();
  const note = (message: string, trial: Trial, severity: Problem['severity'] = 'error') => {
    const entry = found.get(message) ?? { severity, trials: [] };
    entry.trials.push(trial);
    found.set(message, entry);
  };
  let shape: { dict: boolean; trial: Trial } | undefined;
  let keys: { names: string; trial: Trial } | undefined;
  const types = new Map<string, { type: string; trial: Trial }>();
  results.forEach((r, i) => {
    const trial = trials[i]!;
    if (r.error) {
      if (/MEDRL_JUDGE_(URL|MODEL) is not set/.test(r.error) && !judgeSet) {
        // The reward raises there on the cluster too, inside verl's reward manager or TRL's reward call: the step dies.
        note(
          `calls the judge, but the run has no judge (MEDRL_JUDGE_URL): on these rows the reward raises and the training step dies; give the run a judge (medrl.yaml judges, or a service named judge in the spec)`,
          trial,
        );
      } else if (/judge request failed|judge HTTP (429|5\d\d)/.test(r.error)) {
        note(
          `calls the judge, which did not answer at check time (a judge the run starts itself is not up yet): those samples were not checked`,
          trial,
          'warning',
        );
      } else if (/judge HTTP (\d+)/.test(r.error)) {
        // medrl_judge's message carries the judge's answer body, which may echo the prompt: only the status is shown.
        note(
          `the judge refused the request (HTTP ${/judge HTTP (\d+)/.exec(r.error)![1]}): check MEDRL_JUDGE_MODEL and the judge's API key`,
          trial,
        );
      } else note(describeError(r.error, r.traceback), trial);
      return;
    }
    if (framework === 'trl') {
      if (r.detail)
        note(
          `returned a dict: TRL puts every reward function's values into a float tensor (trl/trainer/grpo_trainer.py _calculate_rewards); return a list of floats (None for "no reward")`,
          trial,
        );
      return;
    }
    shape ??= { dict: r.detail !== null, trial };
    if (shape.dict !== (r.detail !== null)) {
      note(
        `returned a ${r.detail ? 'dict' : 'number'}, but ${rowName(shape.trial)} returned a ${shape.dict ? 'dict' : 'number'}: verl collects a dict's keys only from the samples that return one, and its validation then finds keys without a value for every sample (verl/trainer/ppo/ray_trainer.py _validate); return the same type for every sample`,
        trial,
      );
      return;
    }
    if (!r.detail) return;
    const names = Object.keys(r.detail).sort().join(', ');
    if (!keys) keys = { names, trial };
    else if (names !== keys.names) {
      note(
        `returned keys ${names}, but ${rowName(keys.trial)} returned ${keys.names}: verl appends each key per sample and its validation needs one value per sample for every key (verl/trainer/ppo/ray_trainer.py _validate); return the same keys for every sample`,
        trial,
      );
    }
    for (const [key, value] of Object.entries(r.detail)) {
      const type =
        value === null
          ? 'None'
          : Array.isArray(value)
            ? 'list'
            : typeof value === 'object'
              ? 'dict'
              : typeof value === 'string'
                ? 'string'
                : 'number';
      if (type === 'None' || type === 'list' || type === 'dict') {
        note(
          `returned ${key}=${type}: verl averages every extra key over the samples (verl/trainer/ppo/metric_utils.py process_validation_metrics) and makes it an array; give ${key} a number or a string for every sample (e.g. 0.0 or "" instead of None, a joined string instead of a list)`,
          trial,
        );
        continue;
      }
      const first = types.get(key);
      if (!first) types.set(key, { type, trial });
      else if (first.type !== type)
        note(
          `returned ${key} as a ${type}, but ${rowName(first.trial)} returned a ${first.type}: verl averages a key whose first value is a number (metric_utils.process_validation_metrics); keep each key's type the same for every sample`,
          trial,
        );
    }
  });
  return [...found].map(([message, { severity, trials: ts }]) => {
    const [first, ...rest] = ts;
    const others = [...new Set(rest.map((t) => t.row.index + 1).filter((n) => n !== first!.row.index + 1))];
    return {
      ...dataAt(first!.row),
      severity,
      message: `with ${answerName(first!)}, the reward function ${message}${others.length ? ` (also rows ${others.join(', ')})` : ''}`,
    };
  });
}

function answerName(t: Trial): string {
  return t.answer === 'empty' ? 'an empty answer' : `the ${t.answer} as the answer`;
}

function rowName(t: Trial): string {
  return `row ${t.row.index + 1} (${t.answer === 'empty' ? 'empty answer' : t.answer})`;
}
