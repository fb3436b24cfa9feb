import type { RunSpec } from './run-spec';
import type { HostDirs } from './host-paths';
import type { Problem } from '../errors/located-error';

/** The trainer's command line as words (each is shell-quoted when the launch script is written) and its environment. */
export interface TrainerCommand {
  argv: string[];
  env: Record<string, string>;
  /** A folder put first on PYTHONPATH (e.g. the uploaded reward module's). */
  pythonPath?: string;
  /** Files the command reads, written into the run folder: name relative to it → content (e.g. TRL's dataset config). */
  files?: Record<string, string>;
}

/** What a launcher needs to know about the run being prepared. */
export interface LaunchInputs {
  spec: RunSpec;
  id: string;
  /** Absolute run folder on the host. */
  dir: string;
  dirs: HostDirs;
  /** Absolute path of the reward file uploaded into the run folder, when the reward is a function. */
  rewardFile?: string;
  /** Absolute path of the uploaded agent loop file, when the spec has rollout.agentLoop (verl). */
  agentLoopFile?: string;
  /** The trainer's version found on the host by the checks before submit; undefined when not checked (dry run). */
  version?: string;
}

export type OverrideValue = NonNullable<RunSpec['overrides']>[string];

/**
 * Everything verl- or TRL-specific about launching a run lives behind this interface, one file per trainer (as
 * `Scheduler` does for ssh/slurm/ray): the launch flags by version, what the real trainer would refuse, resuming.
 */
export interface Trainer {
  readonly framework: RunSpec['framework'];
  /** The Python distribution whose installed version picks the flags (importlib.metadata name). */
  readonly distribution: string;
  /** The trainer's command line for a run. */
  command(inp: LaunchInputs): TrainerCommand;
  /** What the real trainer would refuse in this spec, found from the spec alone, before anything reaches a host. */
  problems(spec: RunSpec, specFile: string): Problem[];
  /** What the version found on the host means for the launch line: keys it lacks, rules it applies, a version too old. */
  versionProblems(version: string, spec: RunSpec, specFile: string): Problem[];
  /** The spec overrides that make a new run resume from a checkpoint folder of this trainer. */
  resumeOverrides(checkpointPath: string): Record<string, OverrideValue>;
  /** A shell test that the trainer is installed after the setup lines, and its words for the user. */
  installCheck(spec: RunSpec): { test: string; what: string };
  /** How a run of several nodes starts: the driver on a Ray cluster, or the launcher once per node with its machine flags. */
  multiNode(spec: RunSpec): 'ray' | 'accelerate' | 'torchrun';
}

/**
 * PEP 440 release order, enough for verl's versions ("0.5.0", "0.6.0.dev0", "0.7.0rc1", "0.4.1.post1"): true when
 * `version` is at or above `min`. A pre-release or dev build of `min` itself is below it (it may predate the feature).
 */
export function versionAtLeast(version: string, min: readonly number[]): boolean {
  const m = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(version.trim());
  if (!m) return false;
  const release = m[1]!.split('.').map(Number);
  for (let i = 0; i < Math.max(release.length, min.length); i++) {
    const a = release[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return !/^[.-]?(a|b|c|rc|alpha|beta|pre|preview|dev)/i.test(m[2] ?? '');
}
