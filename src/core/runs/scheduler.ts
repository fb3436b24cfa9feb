import type { Host } from '../remote/host';
import type { RunRecord } from './run-record';
import type { RunSpec } from './run-spec';
import type { Problem } from '../errors/located-error';

/** What a scheduler records about a started job (into run.json). */
interface StartedJob {
  pid?: number;
  pgid?: number;
  jobId?: string;
}

/** A run folder ready to start: job.sh and launch.sh are in it. */
export interface ReadyRun {
  id: string;
  dir: string;
  spec: RunSpec;
  /** What launch.sh exports (no secrets): a scheduler whose job starts processes elsewhere gives them the same. */
  env: Record<string, string>;
  /** The folder launch.sh puts first on PYTHONPATH (the uploaded reward's), for processes started elsewhere too. */
  pythonPath?: string;
}

/** How jobs start and stop on a host: detached processes (ssh), sbatch (slurm) or ray job submit (ray). */
export interface Scheduler {
  readonly name: RunRecord['scheduler'];
  /** Why the scheduler cannot take secrets, when it cannot: a submit with secrets is refused before any folder is made. */
  readonly refusesSecrets?: string;
  /** What this scheduler would do with the spec that the user should know before submit (shown by --dry-run and submit). */
  problems?(spec: RunSpec, specFile: string): Problem[];
  /** Extra files the scheduler needs in the run folder (e.g. the sbatch script), by name. */
  files(run: ReadyRun, setup: string[]): Record<string, string>;
  /** Starts the job; `secrets` go to it over stdin, never onto a command line or into a file. */
  start(host: Host, run: Pick<ReadyRun, 'id' | 'dir'>, secrets: string): Promise<StartedJob>;
  /** Stops the job. The caller has already written the `cancelled` marker. */
  cancel(host: Host, record: RunRecord): Promise<void>;
}

/** The first line of stdout that matches, or an error that shows what the command printed. */
export function expectOutput(host: Host, what: string, out: string, re: RegExp): RegExpExecArray {
  const m = re.exec(out);
  if (!m) throw new Error(`${host.name}: ${what}: unexpected output: ${out.trim().slice(0, 500) || '(nothing)'}`);
  return m;
}
