import { posix } from 'node:path';
import { shellQuote } from '../remote/shell-quote';
import { RUN_FILES } from './run-record';
import type { TrainerCommand } from './trainer';
import type { Problem } from '../errors/located-error';
import type { RunUses } from './provenance';

/**
 * Environment a run gets from outside its spec (built by resolveRunEnv() in run-environment.ts): the services it needs
 * (MEDRL_<NAME>_URL/_MODEL, from the spec's `services:` and medrl.yaml judges). `vars` are written into launch.sh;
 * `secrets` (API keys, HF_TOKEN, WANDB_API_KEY) never touch a file or a command line: the scheduler hands them to the
 * job over stdin. `problems`: what keeps the run from getting what it needs (a service not running, a missing key).
 */
export interface RunEnv {
  vars: Record<string, string>;
  secrets: Record<string, string>;
  problems?: Problem[];
  /** The services and judges behind the variables, for the run's provenance.json. */
  uses?: RunUses;
}

export const NO_RUN_ENV: RunEnv = { vars: {}, secrets: {} };

interface LaunchScriptInputs {
  id: string;
  name: string;
  dir: string;
  workdir: string;
  /** The host's setup lines then the spec's (conda/venv activation): shell lines by design, written as given. */
  setup: string[];
  /** medrl.yaml host env, then the spec's env, then the run's services env (later wins). */
  env: Record<string, string>;
  command: TrainerCommand;
  summary: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function exportLine(name: string, value: string): string {
  if (!ENV_NAME.test(name)) throw new Error(`invalid environment variable name "${name}"`);
  return `export ${name}=${shellQuote(value)}`;
}

/** Every variable launch.sh exports (medrl.yaml host env, the spec's, the run's, the trainer's, the run's identity). */
export function launchEnv(inp: Pick<LaunchScriptInputs, 'id' | 'name' | 'dir' | 'env' | 'command'>): Record<string, string> {
  return { ...inp.env, ...inp.command.env, MEDRL_RUN_ID: inp.id, MEDRL_RUN_NAME: inp.name, MEDRL_RUN_DIR: inp.dir };
}

/** The line that puts a folder first on PYTHONPATH (the uploaded reward's, so its own imports resolve). */
export function pythonPathLines(folder: string | undefined): string[] {
  return folder ? [`export PYTHONPATH=${shellQuote(folder)}\${PYTHONPATH:+:$PYTHONPATH}`] : [];
}

/** `export NAME='value'` lines (names checked, values quoted): launch.sh, and the Slurm Ray node script. */
export function exportLines(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => exportLine(k, v));
}

/**
 * Where a launcher takes its own flags: after `trl SUB` and `accelerate launch` (accelerate's flags; trl hands the flags
 * its script does not know to accelerate: trl/cli/commands/training.py, TRL 1.10), after `torchrun` (before `-m`).
 * -1 for a plain `python3 -m` (verl's Ray driver).
 */
function launcherFlagsAt(argv: string[]): number {
  if (argv[0] === 'trl' || (argv[0] === 'accelerate' && argv[1] === 'launch')) return 2;
  // A resumed TRL run: `python3 RUN/trl_resume.py SUB ...` is TRL's CLI, so its launcher flags go after SUB too.
  if (argv[0] === 'python3' && argv[1]?.endsWith('/trl_resume.py')) return 3;
  if (argv[0] === 'torchrun') return 1;
  return -1;
}

/** launch.sh: the whole job as one bash script (viewable before submitting); every value is quoted. */
export function renderLaunchScript(inp: LaunchScriptInputs): string {
  const env = launchEnv(inp);
  const at = launcherFlagsAt(inp.command.argv);
  const lines = [
    '#!/usr/bin/env bash',
    `# MedRL Studio run ${inp.id}: ${inp.summary}`,
    '# Generated from spec.yaml in this folder. Started by job.sh, which keeps output.log and writes exit_code.',
    'set -e',
    `cd ${shellQuote(inp.workdir)}`,
    ...(inp.setup.length ? ['# setup (medrl.yaml host, then the spec)', ...inp.setup] : []),
    ...exportLines(env),
    ...pythonPathLines(inp.command.pythonPath),
    ...(at >= 0 ? ['# "$@": the launcher\'s per-node flags, given by job.sh on a multi-node Slurm job (none otherwise)'] : []),
    'set +e',
    `exec ${[...commandLines(inp.command.argv.slice(0, Math.max(at, 0))), ...(at >= 0 ? ['"$@"'] : []), ...commandLines(inp.command.argv.slice(Math.max(at, 0)))].join(' \\\n  ')}`,
    '',
  ];
  return lines.join('\n');
}

/** The command one option per line: a `key=value` override, or a `--flag` with its values. */
function commandLines(argv: string[]): string[] {
  const lines: string[][] = [];
  for (const w of argv) {
    if (lines.length === 0 || w.startsWith('--') || w.includes('=') || lines[lines.length - 1]![0]!.includes('=')) lines.push([]);
    lines[lines.length - 1]!.push(shellQuote(w));
  }
  return lines.map((l) => l.join(' '));
}

/**
 * job.sh: what every scheduler starts. It first makes everything it writes private (umask 077: checkpoints, rollout
 * dumps, logs) and records its own pid, process group and Slurm job id in `started` (atomically), so a job whose submit
 * died after starting it is still listed and cancellable; a run cancelled before that point does not start. It runs
 * launch.sh with stdout+stderr in output.log and writes exit_code (atomically) when it ends, so a finished run is known
 * from its folder alone. `run` replaces the line that runs launch.sh (a multi-node Slurm job starts it on every node;
 * node 0 writes output.log).
 */
export function renderJobScript(dir: string, run?: string): string {
  const q = (f: string) => shellQuote(posix.join(dir, f));
  return [
    '#!/usr/bin/env bash',
    "# MedRL Studio job wrapper: output.log gets the job's output, exit_code its exit status when it ends.",
    'umask 077',
    `printf '%s %s %s\\n' "$$" "$(ps -o pgid= -p $$ | tr -d ' ')" "\${SLURM_JOB_ID:-}" > ${q(`${RUN_FILES.started}.tmp`)} && mv ${q(`${RUN_FILES.started}.tmp`)} ${q(RUN_FILES.started)}`,
    `if [ -e ${q(RUN_FILES.cancelled)} ]; then echo 'medrl: cancelled before it started' > ${q(RUN_FILES.log)}; code=130; else`,
    `  ${run ?? `bash ${q(RUN_FILES.launch)} > ${q(RUN_FILES.log)} 2>&1 < /dev/null`}`,
    '  code=$?',
    'fi',
    `date -u +%Y-%m-%dT%H:%M:%SZ > ${q(RUN_FILES.ended)}`,
    `echo "$code" > ${q(`${RUN_FILES.exitCode}.tmp`)} && mv ${q(`${RUN_FILES.exitCode}.tmp`)} ${q(RUN_FILES.exitCode)}`,
    'exit "$code"',
    '',
  ].join('\n');
}

/** Shell lines that read the run's secrets (one `NAME=value` per line) from stdin and export them. */
export function secretsFromStdin(): string {
  return 'while IFS= read -r medrl_kv; do case $medrl_kv in *=*) export "$medrl_kv";; esac; done';
}

/** The stdin that carries secrets to secretsFromStdin(). */
export function secretsInput(secrets: Record<string, string>): string {
  return Object.entries(secrets)
    .map(([k, v]) => {
      if (!ENV_NAME.test(k)) throw new Error(`invalid environment variable name "${k}"`);
      if (/[\n\r\0]/.test(v)) throw new Error(`the value of ${k} has a line break: secrets are single-line`);
      return `${k}=${v}\n`;
    })
    .join('');
}
