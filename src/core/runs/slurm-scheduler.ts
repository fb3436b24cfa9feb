import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { secretsFromStdin } from './launch-script';
import { RUN_FILES } from './run-record';
import { expectOutput, type ReadyRun, type Scheduler } from './scheduler';

/** job.sbatch: the spec's resources as #SBATCH lines (values are checked by the spec schema), then job.sh. */
export function renderSbatchScript(run: ReadyRun): string {
  const r = run.spec.resources;
  const lines = ['#!/usr/bin/env bash', `#SBATCH --job-name=${run.id}`, `#SBATCH --nodes=${r?.nodes ?? 1}`, '#SBATCH --ntasks-per-node=1'];
  const gpus = r?.gpusPerNode ?? 1;
  if (gpus > 0) lines.push(`#SBATCH --gres=gpu:${gpus}`);
  if (r?.cpusPerTask) lines.push(`#SBATCH --cpus-per-task=${r.cpusPerTask}`);
  if (r?.memory) lines.push(`#SBATCH --mem=${r.memory}`);
  if (r?.partition) lines.push(`#SBATCH --partition=${r.partition}`);
  if (r?.time) lines.push(`#SBATCH --time=${r.time}`);
  if (r?.account) lines.push(`#SBATCH --account=${r.account}`);
  lines.push('# output.log and exit_code are written by job.sh; Slurm\'s own messages go to slurm-<jobid>.out', `exec bash ${shellQuote(posix.join(run.dir, 'job.sh'))}`, '');
  return lines.join('\n');
}

/**
 * The `slurm` scheduler: `sbatch` with the spec's resources; state from `squeue` while Slurm remembers the job, and from
 * the run folder (exit_code) after; `scancel` to stop. sacct is not needed (clusters often run without accounting).
 */
export const slurmScheduler: Scheduler = {
  name: 'slurm',
  files: (run) => ({ [RUN_FILES.sbatch]: renderSbatchScript(run) }),
  async start(host, run, secrets) {
    // sbatch passes the submitting environment (secrets included) to the job.
    const script = [
      `cd ${shellQuote(run.dir)} || exit 1`,
      secretsFromStdin(),
      `sbatch --parsable --output=${shellQuote(posix.join(run.dir, 'slurm-%j.out'))} ${shellQuote(posix.join(run.dir, RUN_FILES.sbatch))}`,
    ].join('\n');
    const r = await execChecked(host, script, { stdin: secrets, timeoutMs: 60_000 });
    return { jobId: expectOutput(host, 'sbatch', r.stdout, /^(\d+)(;\S+)?$/m)[1] };
  },
  async cancel(host, record) {
    if (!record.jobId) throw new Error(`${record.id}: run.json has no Slurm job id: the job was never queued`);
    await execChecked(host, `scancel ${shellQuote(record.jobId)}`, { timeoutMs: 30_000 });
  },
};
