import type { RunSpec } from './run-spec';
import type { HostDirs } from './host-paths';

/** The trainer's command line as words (each is shell-quoted when the launch script is written) and its environment. */
export interface TrainerCommand {
  argv: string[];
  env: Record<string, string>;
  /** A folder put first on PYTHONPATH (e.g. the uploaded reward module's). */
  pythonPath?: string;
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
}

export type OverrideValue = NonNullable<RunSpec['overrides']>[string];
