import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import type { Checkpoint } from './checkpoint';
import { stepOfFolder } from '../runs/checkpoint-folder';

/**
 * Deletes a checkpoint folder and returns the bytes freed. Only a `global_step_N` / `checkpoint-N` folder is ever
 * removed. Deleting verl's latest step points latest_checkpointed_iteration.txt at the newest step left (or removes it),
 * so a resume never looks for a folder that is gone. One round trip.
 */
export async function deleteCheckpoint(host: Host, ck: Checkpoint): Promise<{ freedBytes: number; latest?: number }> {
  const name = posix.basename(ck.path);
  const s = stepOfFolder(name);
  if (!s || s.step !== ck.step || posix.dirname(ck.path) !== ck.root)
    throw new Error(`refusing to delete ${ck.host}:${ck.path}: not a checkpoint folder (global_step_N or checkpoint-N)`);
  const root = shellQuote(ck.root);
  const r = await execChecked(
    host,
    [
      `cd ${root} || exit 1`,
      `rm -rf ${shellQuote(name)} || exit 1`,
      ck.framework === 'verl'
        ? `if [ -f latest_checkpointed_iteration.txt ] && [ "$(cat latest_checkpointed_iteration.txt)" = ${ck.step} ]; then
  L=$(ls -d global_step_* 2>/dev/null | sed 's/^global_step_//' | sort -n | tail -n 1)
  if [ -n "$L" ]; then echo "$L" > latest_checkpointed_iteration.txt; echo "latest\t$L"; else rm -f latest_checkpointed_iteration.txt; fi
fi`
        : '',
    ].join('\n'),
  );
  const latest = /^latest\t(\d+)/m.exec(r.stdout);
  return { freedBytes: ck.sizeBytes, ...(latest ? { latest: Number(latest[1]) } : {}) };
}
