import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { expectOutput, type Scheduler } from './scheduler';
import { RUN_ID_PATTERN } from './run-id';

/** setup.sh: the shell lines that put `ray` on PATH (host setup, then the spec's), sourced by submit only. */
const RAY_SETUP = 'setup.sh';

/** runtime_env.yaml: the job's Ray runtime_env (JSON, which YAML reads as is), given to `ray job submit --runtime-env`. */
export const RAY_RUNTIME_ENV = 'runtime_env.yaml';

/**
 * The job's runtime_env: launch.sh's variables as `env_vars`. verl's TaskRunner and reward workers are Ray actors that
 * start in raylets, not under launch.sh, so only the job's runtime_env reaches them (Ray applies it to the entrypoint
 * and every task and actor of the job; since Ray 2.8 it is merged with verl's own ray.init(runtime_env=...), and the
 * same variable set in both is refused: ray-project/ray#39208).
 */
function rayRuntimeEnv(env: Record<string, string>, pythonPath?: string): string {
  // Ray expands ${VAR} in env_vars from the worker's own environment, so the cluster's PYTHONPATH is kept after ours.
  const vars = pythonPath ? { ...env, PYTHONPATH: `${pythonPath}:\${PYTHONPATH}` } : env;
  return `${JSON.stringify({ env_vars: vars }, null, 2)}\n`;
}

/** Setup lines are bash (`source ...`): the command runs in bash after them. Only submit sources them (see RAY_JOBS). */
function withRaySetup(dir: string, command: string): string {
  return `bash -c ${shellQuote(`cd ${shellQuote(dir)} || exit 1\n. ./${RAY_SETUP} > /dev/null\n${command}`)}`;
}

/**
 * Where submit records, per run id, the `ray` executable its setup lines found (absolute path) and RAY_ADDRESS: a
 * folder in the user's home on the host that only submit writes. Status and stop run that recorded `ray` with no setup,
 * never a file of a run folder: a runsDir is named by medrl.yaml, which an untrusted repository can point at folders
 * it wrote (a run.json saying ray next to a setup.sh), and listing runs must not run them.
 */
export const RAY_JOBS = '.medrl/ray-jobs';

/** Shell lines (after the setup) that record `ray`'s absolute path and RAY_ADDRESS for the run `id`. */
function recordRay(id: string): string {
  const file = `"$HOME"/${RAY_JOBS}/${shellQuote(id)}`;
  return [
    'medrl_ray=$(command -v ray) || { echo "ray is not on PATH after the setup lines (medrl.yaml host setup, the spec\'s setup)" >&2; exit 127; }',
    'case $medrl_ray in /*) ;; *) echo "ray is a shell alias or function ($medrl_ray), not an executable file" >&2; exit 127;; esac',
    `(umask 077 && mkdir -p "$HOME"/${RAY_JOBS} && printf '%s\\n%s\\n' "$medrl_ray" "\${RAY_ADDRESS-}" > ${file}.tmp && mv ${file}.tmp ${file}) || exit 1`,
  ].join('\n');
}

/**
 * Runs the `ray` recorded for run `idWord` (a shell word: a quoted id or "$d") with `args`, from $HOME, with the
 * recorded RAY_ADDRESS. The record is checked when read (an absolute path to an executable file); a run with no record
 * (one a workspace made, or one submitted before ray was recorded) says so and runs nothing.
 */
export function recordedRay(idWord: string, args: string): string {
  return `(f="$HOME"/${RAY_JOBS}/${idWord}; b=""; a=""; [ -f "$f" ] && { IFS= read -r b; IFS= read -r a; } < "$f"
case $b in /*) [ -f "$b" ] && [ -x "$b" ] || b="";; *) b="";; esac
if [ -z "$b" ]; then echo "no ray recorded for this run in ~/${RAY_JOBS} (only runs submitted by MedRL Studio have one)"; exit 3; fi
cd "$HOME" || exit 1
if [ -n "$a" ]; then export RAY_ADDRESS="$a"; fi
"$b" ${args})`;
}

/** Ray's job states (JobStatus) as printed by `ray job status`, in the four forms its CLI uses. */
export function parseRayStatus(text: string): 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'STOPPED' | undefined {
  if (/Job '[^']*' succeeded/.test(text)) return 'SUCCEEDED';
  if (/Job '[^']*' failed/.test(text)) return 'FAILED';
  if (/Job '[^']*' was stopped/.test(text)) return 'STOPPED';
  const m = /Status for job '[^']*': (PENDING|RUNNING|SUCCEEDED|FAILED|STOPPED)/.exec(text);
  return m ? (m[1] as 'PENDING' | 'RUNNING') : undefined;
}

/** Why a Ray job gets no secrets: said when a submit is refused, and by the run environment before it. */
export const RAY_NO_SECRETS =
  "the ray scheduler cannot pass API keys or tokens to a job without writing them to a file or a command line (Ray's dashboard also keeps every job's runtime_env): set them in the cluster's environment, or use the ssh or slurm scheduler";

/**
 * The `ray` scheduler: `ray job submit --no-wait` on the host (the head node; RAY_ADDRESS from the host's env or
 * setup), with the run id as submission id; `ray job status` in the listing and `ray job stop` to cancel run the
 * `ray` submit recorded (recordedRay), never the run folder's setup.sh. Multi-node verl runs this way (trainer.nnodes
 * from the spec's resources); the run's variables reach its workers through runtime_env.yaml. Secrets cannot reach a
 * Ray job without a file or a command line (and the dashboard keeps every job's runtime_env, env_vars included, for
 * anyone who can reach it), so runs with secrets are refused here.
 */
export const rayScheduler: Scheduler = {
  name: 'ray',
  refusesSecrets: RAY_NO_SECRETS,
  files: (run, setup) => ({
    [RAY_SETUP]: ["# Puts the ray CLI on PATH: the host's setup, then the spec's (from medrl.yaml and spec.yaml).", ...setup, ''].join(
      '\n',
    ),
    [RAY_RUNTIME_ENV]: rayRuntimeEnv(run.env, run.pythonPath),
  }),
  async start(host, run) {
    const cmd = `${recordRay(run.id)}\n"$medrl_ray" job submit --no-wait --submission-id ${shellQuote(run.id)} --runtime-env ${RAY_RUNTIME_ENV} -- bash ${shellQuote(posix.join(run.dir, 'job.sh'))}`;
    const r = await execChecked(host, withRaySetup(run.dir, cmd), { timeoutMs: 120_000 });
    return { jobId: expectOutput(host, 'ray job submit', r.stdout, /Job '([^']+)' submitted successfully/)[1] };
  },
  async cancel(host, record) {
    if (!record.jobId) throw new Error(`${record.id}: run.json has no Ray job id: the job was never submitted`);
    if (!RUN_ID_PATTERN.test(record.id)) throw new Error(`${record.id}: not a run id`);
    await execChecked(host, recordedRay(shellQuote(record.id), `job stop ${shellQuote(record.jobId)}`), { timeoutMs: 120_000 });
  },
};
