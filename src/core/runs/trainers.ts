import type { RunSpec } from './run-spec';
import type { Trainer } from './trainer';
import { verlTrainer } from './verl-trainer';
import { trlTrainer } from './trl-trainer';

export function trainerFor(framework: RunSpec['framework']): Trainer {
  return framework === 'trl' ? trlTrainer : verlTrainer;
}
