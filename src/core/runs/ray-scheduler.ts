import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { expectOutput, type Scheduler } from './scheduler';

/** setup.sh: the shell lines that put `ray` on PATH (host setup, then the spec's), for submit, status and stop. */
export const RAY_SETUP = 'setup.sh';

/** Setup lines are bash (`source ...`): the command runs in bash after them. */
export function withRaySetup(dir: string, command: string): string {
  return `bash -c ${shellQuote(`cd ${shellQuote(dir)} || exit 1\n. ./${RAY_SETUP} > /dev/null\n${command}`)}`;
}

/** Ray's job states (JobStatus) as printed by `ray job status`, in the four forms its CLI uses. */
export function parseRayStatus(text: string): 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'STOPPED' | undefined {
  if (/Job '[^']*' succeeded/.test(text)) return 'SUCCEEDED';
  if (/Job '[^']*' failed/.test(text)) return 'FAILED';
  if (/Job '[^']*' was stopped/.test(text)) return 'STOPPED';
  const m = /Status for job '[^']*': (PENDING|RUNNING|SUCCEEDED|FAILED|STOPPED)/.exec(text);
  return m ? (m[1] as 'PENDING' | 'RUNNING') : undefined;
}

/**
 * The `ray` scheduler: `ray job submit --no-wait` on the host (the head node; RAY_ADDRESS from the host's env or
 * setup), with the run id as submission id; `ray job status` in the listing, `ray job stop` to cancel. Multi-node verl
 * runs this way (trainer.nnodes from the spec's resources). Secrets cannot reach a Ray job without a file or a command
 * line, so runs with API keys are refused here.
 */
export const rayScheduler: Scheduler = {
  name: 'ray',
  files: (_run, setup) => ({ [RAY_SETUP]: ['# Puts the ray CLI on PATH: the host\'s setup, then the spec\'s (from medrl.yaml and spec.yaml).', ...setup, ''].join('\n') }),
  async start(host, run, secrets) {
    if (secrets.length) throw new Error(`${run.id}: the ray scheduler cannot pass API keys to a job without writing them to a file or a command line: set them in the cluster's environment, or use the ssh or slurm scheduler`);
    const cmd = `ray job submit --no-wait --submission-id ${shellQuote(run.id)} -- bash ${shellQuote(posix.join(run.dir, 'job.sh'))}`;
    const r = await execChecked(host, withRaySetup(run.dir, cmd), { timeoutMs: 120_000 });
    return { jobId: expectOutput(host, 'ray job submit', r.stdout, /Job '([^']+)' submitted successfully/)[1] };
  },
  async cancel(host, record) {
    if (!record.jobId) throw new Error(`${record.id}: run.json has no Ray job id: the job was never submitted`);
    await execChecked(host, withRaySetup(record.dir, `ray job stop ${shellQuote(record.jobId)}`), { timeoutMs: 120_000 });
  },
};
