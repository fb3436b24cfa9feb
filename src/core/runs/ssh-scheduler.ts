import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { secretsFromStdin } from './launch-script';
import { expectOutput, type Scheduler } from './scheduler';

/**
 * The `ssh` scheduler: the job runs as a detached process on the host (`setsid nohup`), so it survives the SSH
 * connection closing; its pid is also its process group, which cancel stops as a whole.
 */
export const sshScheduler: Scheduler = {
  name: 'ssh',
  files: () => ({}),
  async start(host, run, secrets) {
    const script = [
      `cd ${shellQuote(run.dir)} || exit 1`,
      secretsFromStdin(),
      `setsid nohup bash ${shellQuote(posix.join(run.dir, 'job.sh'))} > /dev/null 2>&1 < /dev/null &`,
      'echo "started $!"',
    ].join('\n');
    const r = await execChecked(host, script, { stdin: secrets, timeoutMs: 30_000 });
    const pid = Number(expectOutput(host, 'starting the job', r.stdout, /^started (\d+)$/m)[1]);
    // setsid makes the job the leader of a new session and process group: its pgid is its pid.
    return { pid, pgid: pid };
  },
  async cancel(host, record) {
    if (record.pgid === undefined && record.pid === undefined) throw new Error(`${record.id}: run.json has no pid: the job never started`);
    const target = record.pgid !== undefined ? `-${record.pgid}` : String(record.pid);
    // TERM the whole group, give the trainer 10 s to stop its workers, then KILL what is left.
    // (`kill -s SIG -- -PGID` is the form both dash and bash accept for a process group.)
    await execChecked(host, [
      `kill -s TERM -- ${target} 2>/dev/null || exit 0`,
      'i=0',
      `while kill -s 0 -- ${target} 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done`,
      `kill -s KILL -- ${target} 2>/dev/null || true`,
    ].join('\n'), { timeoutMs: 30_000 });
  },
};
