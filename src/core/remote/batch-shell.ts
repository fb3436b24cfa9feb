import { randomBytes } from 'node:crypto';
import type { ClientChannel } from 'ssh2';
import type { ExecResult } from './host';
import { shellQuote } from './shell-quote';

/** After a timeout, how long the killed command's end may take to be reported before the shell is given up. */
export const BATCH_KILL_GRACE_MS = 5000;

/**
 * One long-lived `sh` on a host that runs short commands one after another. A new SSH session costs sshd a fork, a login
 * shell and several round trips (tens of ms); a command in a running shell costs one fork. Each command runs in its own
 * process group (setsid) with stdin from /dev/null, so a timeout kills all of it and it cannot eat the next command.
 * Output is framed by a random marker that commands cannot guess.
 */
export class BatchShell {
  private queue: Promise<unknown> = Promise.resolve();
  private out = '';
  private err = '';
  private waiter: (() => void) | undefined;
  private closed: Error | undefined;
  private readonly mark = `\x1emedrl-${randomBytes(8).toString('hex')}`;

  constructor(
    private readonly channel: ClientChannel,
    private readonly killGroup: (pgid: number) => void,
  ) {
    channel.setEncoding('utf8');
    channel.stderr.setEncoding('utf8');
    channel.on('data', (d: string) => this.feed('out', d));
    channel.stderr.on('data', (d: string) => this.feed('err', d));
    channel.on('close', () => {
      this.closed = new Error('the batch shell closed');
      this.waiter?.();
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private feed(which: 'out' | 'err', d: string): void {
    if (which === 'out') this.out += d;
    else this.err += d;
    this.waiter?.();
  }

  /** Runs `command` (a complete sh script) and returns its output and exit status, after the commands queued before it. */
  run(command: string, timeoutMs?: number): Promise<ExecResult> {
    const next = this.queue.then(() => this.runNow(command, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async runNow(command: string, timeoutMs?: number): Promise<ExecResult> {
    if (this.closed) throw this.closed;
    const m = this.mark;
    // `setsid` puts the command in a group of its own (its pid is the group id) that a timeout can kill whole.
    this.channel.write(
      `if command -v setsid >/dev/null; then setsid sh -c ${shellQuote(command)} </dev/null & p=$!; else sh -c ${shellQuote(command)} </dev/null & p=$!; fi; printf '${m} pid %s\\n' "$p" >&2; wait "$p"; s=$?; printf '${m} exit %s\\n' "$s"; printf '${m} end\\n' >&2\n`,
    );
    let timedOut = false;
    let givenUp = false;
    let pid: number | undefined;
    let grace: NodeJS.Timeout | undefined;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            if (pid) this.killGroup(pid);
            // A host that stopped answering never reports the end: the shell is closed (the next command opens another).
            grace = setTimeout(() => {
              givenUp = true;
              this.close();
              this.waiter?.();
            }, BATCH_KILL_GRACE_MS);
          }, timeoutMs);
    try {
      for (;;) {
        const pidMatch = pid === undefined ? new RegExp(`${m} pid (\\d+)\\n`).exec(this.err) : null;
        if (pidMatch) {
          pid = Number(pidMatch[1]);
          this.err = this.err.replace(pidMatch[0], '');
          if (timedOut) this.killGroup(pid);
        }
        const exit = new RegExp(`${m} exit (\\d+)\\n`).exec(this.out);
        const end = this.err.indexOf(`${m} end\n`);
        if (exit && end >= 0) {
          const stdout = this.out.slice(0, exit.index);
          const stderr = this.err.slice(0, end);
          this.out = this.out.slice(exit.index + exit[0].length);
          this.err = this.err.slice(end + m.length + 5);
          const status = Number(exit[1]);
          // sh reports a command killed by signal N as 128 + N.
          const signal = status > 128 && timedOut ? 'SIGKILL' : null;
          return { code: signal ? null : status, signal, stdout, stderr, ...(timedOut ? { timedOut } : {}) };
        }
        if (givenUp) {
          this.closed ??= new Error('the batch shell was closed: a command did not end after its timeout');
          return { code: null, signal: null, stdout: '', stderr: '', timedOut: true };
        }
        if (this.closed) throw this.closed;
        await new Promise<void>((resolve) => (this.waiter = resolve));
        this.waiter = undefined;
      }
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
    }
  }

  close(): void {
    this.channel.end();
  }
}
