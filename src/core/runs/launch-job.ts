import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { makeRunId } from './run-id';
import { RUN_FILES, type RunRecord } from './run-record';
import { renderJobScript, secretsInput } from './launch-script';
import { sshScheduler } from './ssh-scheduler';
import { createRunFolder, startRunFolder, writeRecord } from './submit-run';

/** A job that is not a training run (a service, a merge): a shell script run in a run folder like any run. */
interface JobRequest {
  runsDir: string;
  kind: 'service' | 'merge';
  name: string;
  /** run.json needs a framework and an algorithm: what the job serves or merges, and what it does (serve, merge). */
  framework: RunRecord['framework'];
  algorithm: string;
  /** The job's shell script body (every value already quoted). */
  script: string;
  service?: RunRecord['service'];
  /** Environment handed to the job over stdin (API keys): never in a file, a log or a command line. */
  secrets?: Record<string, string>;
}

function launchScript(req: Pick<JobRequest, 'kind' | 'name' | 'script'>): string {
  return [
    '#!/usr/bin/env bash',
    `# MedRL Studio ${req.kind}: ${req.name.replace(/\n/g, ' ')}. Started by job.sh, which keeps output.log and writes exit_code.`,
    req.script,
    '',
  ].join('\n');
}

/**
 * Starts a job through the runs launcher: its own run folder (run.json, launch.sh, job.sh, output.log, exit_code),
 * detached on the host with the ssh scheduler, so the runs view lists it, cancel stops it, and it outlives the connection.
 */
export async function launchJob(host: Host, req: JobRequest): Promise<RunRecord> {
  const runsDir = await host.resolvePath(req.runsDir);
  const secrets = secretsInput(req.secrets ?? {});
  const recordFor = (id: string): RunRecord => ({
    id,
    name: req.name,
    kind: req.kind,
    framework: req.framework,
    algorithm: req.algorithm,
    host: host.name,
    scheduler: sshScheduler.name,
    created: new Date().toISOString(),
    dir: posix.join(runsDir, id),
    ...(req.service ? { service: req.service } : {}),
  });
  let record = recordFor(makeRunId(req.name));
  for (let attempt = 0; !(await createRunFolder(host, record, attempt >= 4)); attempt++) record = recordFor(makeRunId(req.name));
  const { id, dir } = record;
  const files = { [RUN_FILES.launch]: launchScript(req), 'job.sh': renderJobScript(dir) };
  return startRunFolder(host, { id, dir, files, record, scheduler: sshScheduler }, secrets);
}

/** Starts a stopped job again in its run folder (a service's restart): same launch.sh, new pid, fresh end markers. */
export async function relaunchJob(host: Host, record: RunRecord, secrets: Record<string, string> = {}): Promise<RunRecord> {
  const d = (f: string) => shellQuote(posix.join(record.dir, f));
  await execChecked(host, `rm -f ${d(RUN_FILES.exitCode)} ${d(RUN_FILES.ended)} ${d(RUN_FILES.cancelled)} ${d(RUN_FILES.started)}`);
  const started = await sshScheduler.start(host, record, secretsInput(secrets));
  const next: RunRecord = { ...record, ...started };
  await writeRecord(host, next);
  return next;
}
