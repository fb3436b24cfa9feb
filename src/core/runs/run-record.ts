import { z } from 'zod';

/** run.json: what the runs feature writes into every run folder; every feature that reads runs parses it with this. */
export const runRecordSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  kind: z.enum(['train', 'service', 'merge']),
  framework: z.enum(['verl', 'trl']),
  algorithm: z.string(),
  host: z.string(),
  scheduler: z.enum(['ssh', 'slurm', 'ray']),
  created: z.string(),
  dir: z.string().min(1),
  pid: z.int().optional(),
  pgid: z.int().optional(),
  jobId: z.string().optional(),
  /** The trainer's version on the host when the run was submitted (it picked the launch flags). */
  trainerVersion: z.string().optional(),
  service: z
    .object({
      port: z.int(),
      model: z.string(),
      servedModelName: z.string().optional(),
      engine: z.enum(['vllm', 'sglang', 'trl-vllm-serve']).optional(),
      name: z.string().optional(),
      /** Started with an API key (the key itself is never written anywhere): a restart needs it again. */
      apiKey: z.boolean().optional(),
      /** Address it listens on (none: 127.0.0.1) and, when beyond loopback, the name other machines reach its host by. */
      bind: z.string().optional(),
      address: z.string().optional(),
    })
    .optional(),
});

export type RunRecord = z.output<typeof runRecordSchema>;

export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'lost';

/** States a run can still leave: the tree refreshes on its own while any run is in one. */
export function isActive(state: RunState): boolean {
  return state === 'queued' || state === 'running';
}

/**
 * A random token of this user on a host (under $HOME, 0600), written into each run folder's marker: a folder a repository
 * or anyone else crafted cannot hold it, so a marker that holds it proves a submit made the folder (list-runs.ts sweeps).
 */
export const RUN_MARKER_TOKEN = '.medrl/run-marker';

/** The files of a run folder (the contract other features read). */
export const RUN_FILES = {
  spec: 'spec.yaml',
  launch: 'launch.sh',
  record: 'run.json',
  /** The host's marker token (RUN_MARKER_TOKEN), written by the submit in the command that creates the folder. */
  marker: '.medrl-run',
  /** The run's manifest (spec, reward code, data, model, environment, git, services, judges, submitter): provenance.ts. */
  provenance: 'provenance.json',
  log: 'output.log',
  exitCode: 'exit_code',
  /** When the job ended (ISO 8601 UTC), written by job.sh just before exit_code. */
  ended: 'ended',
  /** Written by cancel before the job is stopped, so a killed job reads as cancelled rather than lost. */
  cancelled: 'cancelled',
  /** `PID PGID SLURM_JOB_ID`, written by job.sh itself (atomically) before it runs anything: a job is never unrecorded. */
  started: 'started',
  /** Slurm: the run's secrets (0600) from submit until the batch script reads and deletes them at its start. */
  secrets: 'secrets.env',
  metrics: 'metrics.jsonl',
  rollouts: 'rollouts',
  validation: 'validation',
  checkpoints: 'checkpoints',
  trlOutput: 'output',
  reward: 'reward',
  /** verl: the spec's agent loop file, its imports, and the agent loop config verl reads (agent_loops.yaml). */
  agentLoop: 'agent',
  sbatch: 'job.sbatch',
} as const;
