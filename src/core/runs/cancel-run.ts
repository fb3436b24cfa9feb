import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { RUN_FILES, type RunRecord } from './run-record';
import { schedulerFor } from './schedulers';

/**
 * Cancels a run: the `cancelled` marker first (so the run reads as cancelled even though a killed job writes no
 * exit_code), then the scheduler stops the job (kill the process group, scancel, ray job stop).
 */
export async function cancelRun(host: Host, record: RunRecord, now: Date = new Date()): Promise<void> {
  await host.writeFile(posix.join(record.dir, RUN_FILES.cancelled), `${now.toISOString()}\n`);
  await schedulerFor(record.scheduler).cancel(host, record);
}
