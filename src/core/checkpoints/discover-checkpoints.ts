import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { execChecked } from '../remote/host';
import { shellPath } from '../remote/shell-quote';
import { runJsonSchema, type Checkpoint, type CheckpointKind, type RunJson, type RunRef } from './checkpoint';
import { stepOfFolder } from '../runs/checkpoint-folder';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';
import { errorMessage } from '../errors/located-error';

/** Where to look on one host: every run folder under `runsDir`, and any run folder or output folder path. */
export interface DiscoverTargets {
  runsDir?: string;
  /** Run folders (with run.json), checkpoint roots (verl default_local_dir, TRL output_dir) or single checkpoint folders. */
  paths?: string[];
}

export interface DiscoveredRun {
  run: RunRef;
  json: RunJson | undefined;
  /** run.json that is not valid JSON: said, not hidden. */
  problem?: string;
  checkpoints: Checkpoint[];
}

export interface Discovery {
  runs: DiscoveredRun[];
  /** Checkpoints under `paths` that are not inside a run folder. */
  loose: Checkpoint[];
  /** Paths that do not exist on the host. */
  missing: string[];
}

// One POSIX sh script answers a whole refresh in one round trip. Each line is TAB separated:
//   now SECS | run DIR RUN_JSON | endrun | root DIR | latest TEXT | e TYPE SIZE MTIME RELPATH | missing PATH | only NAME (a single checkpoint folder)
// `find -printf` is GNU findutils (every Linux GPU machine); file names inside checkpoints are the trainers' own.
const SCRIPT_HEAD = `
printf 'now\\t%s\\n' "$(date +%s)"
scan() {
  [ -d "$1" ] || return 0
  ( cd "$1" 2>/dev/null || exit 0
    printf 'root\\t%s\\n' "$(pwd)"
    if [ -f latest_checkpointed_iteration.txt ]; then printf 'latest\\t%s\\n' "$(head -c 32 latest_checkpointed_iteration.txt | tr -d ' \\t\\r\\n')"; fi
    for d in global_step_* checkpoint-*; do
      [ -d "$d" ] && find "$d" \\( -type f -o -type d \\) -printf 'e\\t%y\\t%s\\t%T@\\t%p\\n'
    done
    exit 0 )
}
run_dir() {
  printf 'run\\t%s\\t' "$(cd "$1" && pwd)"
  tr '\\n\\t' '  ' < "$1/run.json"; echo
  scan "$1/checkpoints"; scan "$1/output"
  printf 'endrun\\n'
}
runs_in() {
  for r in "$1"/*/; do [ -f "$r/run.json" ] && run_dir "\${r%/}"; done; return 0
}
target() {
  if [ ! -e "$1" ]; then printf 'missing\\t%s\\n' "$1"
  elif [ -f "$1/run.json" ]; then run_dir "$1"
  else case "$(basename "$1")" in
    global_step_*|checkpoint-*) printf 'only\\t%s\\n' "$(basename "$1")"; scan "$(dirname "$1")"; printf 'only\\t\\n' ;;
    *) scan "$1" ;;
  esac; fi
}
`;

/** The discovery script for one host (exported for tests of its quoting). */
function discoveryScript(targets: DiscoverTargets): string {
  const lines = [SCRIPT_HEAD];
  if (targets.runsDir) lines.push(`runs_in ${shellPath(targets.runsDir.replace(/\/+$/, ''))}`);
  for (const p of targets.paths ?? []) lines.push(`target ${shellPath(p.replace(/(.)\/+$/, '$1'))}`);
  return lines.join('\n');
}

/** Finds the checkpoints of every run under runsDir and of the given paths on a host, in one round trip. */
export async function discoverCheckpoints(host: Host, targets: DiscoverTargets, opts: { signal?: AbortSignal } = {}): Promise<Discovery> {
  const r = await execChecked(host, discoveryScript(targets), { signal: opts.signal, timeoutMs: 60_000 });
  return parseDiscovery(host.name, r.stdout);
}

interface Acc {
  name: string;
  framework: 'verl' | 'trl';
  step: number;
  size: number;
  mtime: number;
  rel: Set<string>;
  files: string[];
}

/** Turns the script's output into runs and checkpoints. Lines it does not know are ignored (a stray file name). */
function parseDiscovery(hostName: string, out: string): Discovery {
  const result: Discovery = { runs: [], loose: [], missing: [] };
  let now = Date.now() / 1000;
  let run: DiscoveredRun | undefined;
  let root: { dir: string; latest?: number; steps: Map<string, Acc> } | undefined;
  let only: string | undefined;
  const flush = () => {
    if (!root) return;
    const cks = [...root.steps.values()]
      .filter((a) => !only || a.name === only)
      .map((a) => toCheckpoint(hostName, root!.dir, a, now, run?.run));
    markLatest(cks, root.latest);
    if (only) {
      // A single checkpoint folder: "latest" still means latest among its siblings.
      const all = [...root.steps.values()].map((a) => a.step);
      for (const c of cks) c.latest = root.latest !== undefined ? c.step === root.latest : c.step === Math.max(...all);
    }
    if (run) run.checkpoints.push(...cks);
    else result.loose.push(...cks);
    root = undefined;
  };
  for (const line of out.split('\n')) {
    const f = line.split('\t');
    switch (f[0]) {
      case 'now':
        now = Number(f[1]) || now;
        break;
      case 'run': {
        flush();
        const dir = f[1] ?? '';
        let json: RunJson | undefined;
        let problem: string | undefined;
        try {
          const parsed = runJsonSchema.safeParse(JSON.parse(f.slice(2).join(' ')), { error: plainZodError });
          if (parsed.success) json = parsed.data;
          else
            problem = `${hostName}:${dir}/run.json: ${plainIssues(parsed.error.issues)
              .map((i) => `${fieldPath(i.path)}: ${i.message}`)
              .join('; ')}`;
        } catch (err) {
          problem = `${hostName}:${dir}/run.json is not JSON: ${errorMessage(err)}`;
        }
        run = {
          run: { host: hostName, dir, framework: json?.framework, id: json?.id ?? posix.basename(dir), name: json?.name },
          json,
          problem,
          checkpoints: [],
        };
        result.runs.push(run);
        break;
      }
      case 'root':
        flush();
        root = { dir: f[1] ?? '', steps: new Map() };
        break;
      case 'latest':
        if (root && /^\d+$/.test(f[1] ?? '')) root.latest = Number(f[1]);
        break;
      case 'only':
        flush();
        only = f[1] || undefined;
        run = undefined;
        break;
      case 'endrun':
        flush();
        run = undefined;
        break;
      case 'missing':
        flush();
        run = undefined;
        result.missing.push(f[1] ?? '');
        break;
      case 'e': {
        if (!root || f.length < 5) break;
        const rel = f.slice(4).join('\t');
        const top = rel.split('/')[0]!;
        const s = stepOfFolder(top);
        if (!s) break;
        let acc = root.steps.get(top);
        if (!acc) {
          acc = { name: top, ...s, size: 0, mtime: 0, rel: new Set(), files: [] };
          root.steps.set(top, acc);
        }
        const mtime = Number(f[3]) || 0;
        if (f[1] === 'f') acc.size += Number(f[2]) || 0;
        acc.mtime = Math.max(acc.mtime, mtime);
        const inner = rel.slice(top.length + 1);
        if (inner) {
          acc.rel.add(inner);
          if (f[1] === 'f') acc.files.push(inner);
        }
        break;
      }
      default:
        break;
    }
  }
  flush();
  return result;
}

function markLatest(cks: Checkpoint[], latest: number | undefined): void {
  if (!cks.length) return;
  const target = latest ?? Math.max(...cks.map((c) => c.step));
  for (const c of cks) c.latest = c.step === target;
}

const WEIGHTS = /(^|\/)(model[^/]*\.safetensors|pytorch_model[^/]*\.bin)$/;

function toCheckpoint(hostName: string, rootDir: string, a: Acc, nowSecs: number, run: RunRef | undefined): Checkpoint {
  const path = posix.join(rootDir, a.name);
  const has = (p: string) => a.rel.has(p);
  const under = (prefix: string) => [...a.rel].some((r) => r.startsWith(prefix));
  const parts: string[] = [];
  let kind: CheckpointKind;
  let servable: string | undefined;
  let mergeable: string | undefined;
  if (a.framework === 'verl') {
    if (has('actor')) parts.push('actor');
    if (has('critic')) parts.push('critic');
    if (has('actor/huggingface')) parts.push('huggingface');
    const hfWeights = a.files.some((f) => f.startsWith('actor/huggingface/') && WEIGHTS.test(f));
    if (hfWeights) {
      parts.push('hf-weights');
      servable ??= posix.join(path, 'actor/huggingface');
    }
    if (has('actor/lora_adapter')) parts.push('lora_adapter');
    // Merged by MedRL Studio (or by hand) into global_step_N/huggingface: servable as is.
    if (a.files.some((f) => f.startsWith('huggingface/') && WEIGHTS.test(f))) {
      parts.push('merged');
      servable = posix.join(path, 'huggingface');
    }
    const megatron = under('actor/dist_ckpt');
    const fsdp = a.files.some((f) => /^actor\/model_world_size_\d+_rank_\d+\.pt$/.test(f));
    if (megatron) parts.push('dist_ckpt');
    kind = megatron ? 'verl-megatron' : fsdp ? 'verl-fsdp' : hfWeights ? 'verl-hf' : 'verl-fsdp';
    if (megatron || fsdp) mergeable = posix.join(path, 'actor');
  } else {
    const lora = has('adapter_config.json') || has('adapter_model.safetensors') || has('adapter_model.bin');
    if (has('trainer_state.json')) parts.push('trainer_state');
    if (has('optimizer.pt')) parts.push('optimizer');
    if (lora) parts.push('lora_adapter');
    const weights = a.files.some((f) => !f.includes('/') && WEIGHTS.test(f));
    if (weights) parts.push('hf-weights');
    kind = lora && !weights ? 'trl-lora' : 'trl-full';
    if (weights) servable = path;
  }
  const mtimeMs = Math.round(a.mtime * 1000);
  return {
    host: hostName,
    path,
    root: rootDir,
    framework: a.framework,
    step: a.step,
    sizeBytes: a.size,
    mtimeMs,
    ageMs: Math.max(0, Math.round((nowSecs - a.mtime) * 1000)),
    latest: false,
    kind,
    parts,
    ...(servable ? { servable } : {}),
    ...(mergeable ? { mergeable } : {}),
    ...(run ? { run } : {}),
  };
}

/** Checkpoints newest step first, as lists show them. */
export function byStepDesc(a: Checkpoint, b: Checkpoint): number {
  return b.step - a.step || a.path.localeCompare(b.path);
}
