import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { shellJoin, shellPath, shellQuote } from '../remote/shell-quote';
import { readLines } from '../io/line-reader';
import { launchJob } from '../runs/launch-job';
import { runStatus, type RunInfo } from '../runs/list-runs';
import { RUN_FILES, type RunRecord } from '../runs/run-record';
import type { Checkpoint } from './checkpoint';

interface MergeOptions {
  /** Where the HuggingFace folder goes; default `<global_step_N>/huggingface` (then the checkpoint is servable). */
  targetDir?: string;
  /** The base model folder on the host whose `*.json` files are copied in when missing (default: the run spec's model). */
  baseModel?: string;
  /** The verl checkout: where the legacy `scripts/model_merger.py` is looked for (default: the host's workdir). */
  workdir?: string;
  /** Shell lines before the merge (conda/venv activation), e.g. the host's setup. */
  setup?: string[];
  env?: Record<string, string>;
  /** MedRL's stand-ins folder on the host: its stand-in merger is used only when the host has no verl merger (the local demo). */
  standins?: string;
}

function defaultMergeTarget(ck: Checkpoint): string {
  return posix.join(ck.path, 'huggingface');
}

/**
 * The merge as one shell script: verl's `python3 -m verl.model_merger merge` when the host's verl has it, else the legacy
 * `scripts/model_merger.py` (verl <= 0.3, needs --hf_model_path); then the base model's `*.json` files missing in the
 * target are copied in (the step the seeds did by hand).
 */
export function mergeScript(ck: Checkpoint, o: MergeOptions = {}): string {
  if (ck.framework !== 'verl' || !ck.mergeable)
    throw new Error(`${ck.host}:${ck.path} is not a verl FSDP or Megatron checkpoint: nothing to merge`);
  const backend = ck.kind === 'verl-megatron' ? 'megatron' : 'fsdp';
  const local = ck.mergeable;
  const target = o.targetDir ?? defaultMergeTarget(ck);
  const hfConfig = posix.join(local, 'huggingface');
  const base = o.baseModel;
  const hasMerger = `python3 -c 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("verl.model_merger") else 1)' 2>/dev/null`;
  const lines = [
    ...Object.entries(o.env ?? {}).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    ...(o.setup ?? []),
    o.workdir ? `cd ${shellPath(o.workdir)} || exit 1` : '',
    o.standins
      ? `${hasMerger} || [ -f scripts/model_merger.py ] || export PYTHONPATH=${shellQuote(o.standins)}\${PYTHONPATH:+:$PYTHONPATH}`
      : '',
    `TARGET=${shellQuote(target)}`,
    'mkdir -p "$TARGET" || exit 1',
    `if ${hasMerger}; then`,
    `  echo "merging with python3 -m verl.model_merger (backend ${backend})"`,
    `  python3 -m verl.model_merger merge ${shellJoin(['--backend', backend, '--local_dir', local])} --target_dir "$TARGET" || exit $?`,
    'elif [ -f scripts/model_merger.py ]; then',
    `  echo "merging with the legacy scripts/model_merger.py (backend ${backend})"`,
    `  HF=${shellQuote(hfConfig)}; [ -f "$HF/config.json" ] || HF=${base ? shellPath(base) : '"$HF"'}`,
    `  python3 scripts/model_merger.py ${shellJoin(['--backend', backend])} --hf_model_path "$HF" ${shellJoin(['--local_dir', local])} --target_dir "$TARGET" || exit $?`,
    'else',
    `  echo "no verl model merger on this host: neither python3 -m verl.model_merger nor scripts/model_merger.py in $(pwd)" >&2; exit 3`,
    'fi',
    // The base model's config files the merger did not write (generation_config.json, tokenizer files, chat templates).
    `for SRC in ${base ? `${shellPath(base)} ` : ''}${shellQuote(hfConfig)}; do`,
    '  [ -d "$SRC" ] || continue',
    '  for f in "$SRC"/*.json; do',
    '    [ -f "$f" ] || continue; b=$(basename "$f")',
    '    if [ ! -e "$TARGET/$b" ]; then cp "$f" "$TARGET/$b" && echo "copied $b from $SRC"; fi',
    '  done',
    'done',
    'echo "merged into $TARGET"',
  ];
  return lines.filter((l) => l !== '').join('\n');
}

export interface MergeProgress {
  /** 0..1 when the merger reports shard progress. */
  fraction?: number;
  message: string;
}

/** Starts the merge as a run (kind "merge") in the host's runs folder, through the runs launcher. */
export async function startMerge(host: Host, ck: Checkpoint, runsDir: string, o: MergeOptions = {}): Promise<RunRecord> {
  const name = `merge ${ck.run?.name ?? posix.basename(ck.root)} step ${ck.step}`;
  return launchJob(host, { runsDir, kind: 'merge', name, script: mergeScript(ck, o), framework: 'verl', algorithm: 'merge' });
}

/** What a merger's output line says about progress ("Loading 8 FSDP shards: 50%| 4/8", "Saving model to ..."). */
function progressOfLine(line: string): MergeProgress | undefined {
  const m = /(\d+)\/(\d+)\s*(?:\[|$)/.exec(line);
  if (m && Number(m[2]) > 0) return { fraction: Math.min(1, Number(m[1]) / Number(m[2])) * 0.9, message: line.trim() };
  if (/^(Saving|copied|merged into|merging with)/.test(line.trim())) return { message: line.trim() };
  return undefined;
}

function tailOf(run: RunInfo): string {
  return run.logTail.split('\n').slice(-21).join('\n');
}

/** Follows a merge until it ends, reporting progress; resolves with the target folder or rejects with the log tail. */
export async function waitForMerge(
  host: Host,
  job: RunRecord,
  onProgress: (p: MergeProgress) => void,
  opts: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<string> {
  const log = posix.join(job.dir, RUN_FILES.log);
  let offset = 0;
  let target: string | undefined;
  let lostOnce = false;
  for (;;) {
    opts.signal?.throwIfAborted();
    const status = await runStatus(host, job);
    try {
      for await (const line of readLines(host, log, { start: offset })) {
        offset = line.end;
        const p = progressOfLine(line.text);
        if (p) onProgress(p);
        const t = /^merged into (.*)$/.exec(line.text);
        if (t) target = t[1];
      }
    } catch (err) {
      // output.log appears a moment after the job starts
      if ((err as Error).name !== 'HostFileNotFoundError') throw err;
    }
    if (status.state === 'succeeded' && target) {
      onProgress({ fraction: 1, message: `merged into ${target}` });
      return target;
    }
    if (status.state === 'lost' && !lostOnce)
      lostOnce = true; // job.sh may be writing exit_code: look once more
    else if (status.state === 'lost') throw new Error(`${host.name}: merge ${job.id} stopped without an exit code:\n${tailOf(status)}`);
    else if (status.state === 'cancelled') throw new Error(`${host.name}: merge ${job.id} was cancelled; log ${log}`);
    else if (status.state === 'failed' || status.state === 'succeeded') {
      throw new Error(
        `${host.name}: merge failed (exit code ${status.exitCode ?? '?'}${status.state === 'succeeded' ? ', but it did not say where it merged to' : ''}); log ${log}:\n${tailOf(status)}`,
      );
    }
    await new Promise((r) => setTimeout(r, status.state === 'lost' ? 200 : (opts.pollMs ?? 300)));
  }
}
