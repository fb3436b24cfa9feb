import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { secretsFromStdin } from './launch-script';
import { RUN_FILES } from './run-record';
import { expectOutput, type Scheduler } from './scheduler';

/** Exit status of the cancel script when the process group is not the run's: nothing was signalled. */
const NOT_OURS = 3;

/**
 * Shell lines that exit NOT_OURS unless process group "$g" belongs to the run in `dir`: one of its processes is the
 * run's job.sh (`ps -o args=`, POSIX) or has MEDRL_RUN_DIR=dir in its environment (Linux /proc; every process of the job
 * inherits it, so this holds after job.sh itself is gone). A group with no process left exits 0: nothing to stop. Zombies
 * are not counted: where nothing reaps them (a container without an init), a job.sh that ended stays as one, and it has
 * no args or environ to check.
 */
function ownGroupCheck(dir: string): string[] {
  const leader = shellQuote(`bash ${posix.join(dir, 'job.sh')}`);
  const marker = shellQuote(`MEDRL_RUN_DIR=${dir}`);
  return [
    `members=$(ps -eo pid=,pgid=,stat= | awk -v g="$g" '$2 == g && $3 !~ /^Z/ { print $1 }')`,
    '[ -n "$members" ] || exit 0',
    'ours=0',
    'for p in $members; do',
    `  if [ "$(ps -o args= -p "$p")" = ${leader} ]; then ours=1; break; fi`,
    `  if [ -r "/proc/$p/environ" ] && tr '\\0' '\\n' < "/proc/$p/environ" | grep -qxF ${marker}; then ours=1; break; fi`,
    'done',
    `[ $ours = 1 ] || exit ${NOT_OURS}`,
  ];
}

/**
 * The `ssh` scheduler: the job runs as a detached process on the host (`setsid nohup`), so it survives the SSH
 * connection closing; its pid is also its process group, which cancel stops as a whole. job.sh records its own pid and
 * group in `started` too, so the run is cancellable even when this reply never arrives.
 */
export const sshScheduler: Scheduler = {
  name: 'ssh',
  files: () => ({}),
  async start(host, run, secrets) {
    const script = [
      `cd ${shellQuote(run.dir)} || exit 1`,
      'umask 077',
      secretsFromStdin(),
      // MEDRL_RUN_DIR marks every process of the job as this run's: cancel checks it before signalling the group.
      `MEDRL_RUN_DIR=${shellQuote(run.dir)} setsid nohup bash ${shellQuote(posix.join(run.dir, 'job.sh'))} > /dev/null 2>&1 < /dev/null &`,
      'echo "started $!"',
    ].join('\n');
    const r = await execChecked(host, script, { stdin: secrets, timeoutMs: 30_000 });
    const pid = Number(expectOutput(host, 'starting the job', r.stdout, /^started (\d+)$/m)[1]);
    // setsid makes the job the leader of a new session and process group: its pgid is its pid.
    return { pid, pgid: pid };
  },
  async cancel(host, record) {
    const group = record.pgid ?? record.pid;
    if (group !== undefined && group <= 1)
      throw new Error(
        `${host.name}: ${posix.join(record.dir, RUN_FILES.record)} gives process group ${group}, which no job has: nothing was signalled`,
      );
    const target = '-"$g"';
    // The `cancelled` marker is written before this runs and job.sh records itself in `started` before it reads the
    // marker: a job that is not in run.json yet is found there, or it sees the marker and does not start. Only the
    // run's own group is signalled: TERM it whole, give the trainer 10 s to stop its workers, then KILL what is left.
    // (`kill -s SIG -- -PGID` is the form both dash and bash accept for a process group.)
    const r = await host.exec(
      [
        `g=${group ?? ''}`,
        `if [ -z "$g" ] && [ -f ${shellQuote(posix.join(record.dir, RUN_FILES.started))} ]; then read -r _ g _ < ${shellQuote(posix.join(record.dir, RUN_FILES.started))}; fi`,
        '[ -n "$g" ] || exit 0',
        `case $g in *[!0-9]*) exit ${NOT_OURS};; esac`,
        `[ "$g" -gt 1 ] || exit ${NOT_OURS}`,
        ...ownGroupCheck(record.dir),
        `kill -s TERM -- ${target} 2>/dev/null || exit 0`,
        'i=0',
        `while kill -s 0 -- ${target} 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done`,
        `kill -s KILL -- ${target} 2>/dev/null || true`,
      ].join('\n'),
      { timeoutMs: 30_000 },
    );
    if (r.code === NOT_OURS)
      throw new Error(
        `${host.name}: the process group recorded for ${record.id} is not its job's: no process in it runs ${posix.join(record.dir, 'job.sh')} or has MEDRL_RUN_DIR=${record.dir}; nothing was signalled`,
      );
    if (r.code !== 0)
      throw new Error(
        `${host.name}: cancelling ${record.id} failed (exit code ${r.code}${r.timedOut ? ', timed out' : ''}): ${r.stderr.trim()}`,
      );
  },
};
