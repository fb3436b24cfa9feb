import type { RunRef } from '../../core/reward/backtest';

/** Whether a command's argument names a run, as the Runs view's item or a page passes it (else the command asks). */
export function isRunRef(a: unknown): a is RunRef {
  return typeof a === 'object' && a !== null && typeof (a as RunRef).host === 'string' && typeof (a as RunRef).dir === 'string';
}
