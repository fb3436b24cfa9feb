import { posix } from 'node:path';
import { readLines } from '../io/line-reader';
import { HostFileNotFoundError, type Host } from '../remote/host';
import { isActive, RUN_FILES, type RunRecord } from './run-record';
import { listRuns } from './list-runs';

interface FollowOptions {
  /** Byte offset to start from (0: the whole log). */
  start?: number;
  /** Keep reading as the log grows until this returns true (e.g. the run has ended) or the signal aborts. */
  until?: () => Promise<boolean>;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Streams a run's output.log line by line from a byte offset, through range reads, and keeps following while the run
 * is active: each pass resumes at the last complete line's end. Progress bars that end in `\r` arrive as their lines.
 */
export async function* followLog(host: Host, dir: string, opts: FollowOptions = {}): AsyncGenerator<string> {
  const path = posix.join(dir, RUN_FILES.log);
  let pos = opts.start ?? 0;
  for (;;) {
    const finished = opts.until ? await opts.until() : true;
    try {
      for await (const line of readLines(host, path, { start: pos, includePartial: finished, signal: opts.signal })) {
        pos = line.end;
        yield line.text;
      }
    } catch (err) {
      // A queued job has no log yet: wait for it.
      if (!(err instanceof HostFileNotFoundError)) throw err;
      if (finished) return;
    }
    if (finished) return;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
    if (opts.signal?.aborted) return;
  }
}

/**
 * A run's output.log, followed while the run is queued or running (as the Runs view judges it) and ended once it is
 * not: what `medrl logs --follow` and the extension's Follow Logs both show.
 */
export function followRun(
  host: Host,
  runsDir: string,
  run: Pick<RunRecord, 'id' | 'dir'>,
  opts: Omit<FollowOptions, 'until'> = {},
): AsyncGenerator<string> {
  const until = async () => {
    const now = (await listRuns(host, runsDir)).runs.find((r) => r.record.id === run.id);
    return !now || !isActive(now.state);
  };
  return followLog(host, run.dir, { ...opts, until });
}
