import type { RunRecord } from './run-record';
import type { Scheduler } from './scheduler';
import { sshScheduler } from './ssh-scheduler';
import { slurmScheduler } from './slurm-scheduler';
import { rayScheduler } from './ray-scheduler';

export function schedulerFor(name: RunRecord['scheduler']): Scheduler {
  return name === 'slurm' ? slurmScheduler : name === 'ray' ? rayScheduler : sshScheduler;
}
