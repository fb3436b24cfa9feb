import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import {
  NonInteractivePrompter,
  type AuthPrompter,
  type HostKeyQuestion,
  type KeyboardInteractiveQuestion,
  type SecretAnswer,
} from '../core/remote/auth-prompter';

/**
 * Asks on the terminal (stderr, so stdout stays clean for --json); secrets are read without echo. The CLI has no
 * SecretStorage, so nothing is remembered beyond this run. Without a terminal every question fails with what to do.
 */
class TerminalPrompter implements AuthPrompter {
  async confirmHostKey(q: HostKeyQuestion): Promise<boolean> {
    const other = q.knownTypes.length ? `\nknown_hosts holds other key types for it (${q.knownTypes.join(', ')}).` : '';
    const answer = await ask(
      `The authenticity of host '${q.host}' can't be established.\n${q.keyType} key fingerprint is ${q.fingerprint}.${other}\nAre you sure you want to continue connecting (yes/no)? `,
      true,
    );
    return /^y(es)?$/i.test(answer.trim());
  }

  async passphrase(q: { host: string; keyFile: string; retry: boolean }): Promise<SecretAnswer | undefined> {
    const value = await ask(`${q.retry ? 'Wrong passphrase. ' : ''}Enter passphrase for key '${q.keyFile}': `, false);
    return value ? { value, remember: false } : undefined;
  }

  async password(q: { host: string; user: string; retry: boolean }): Promise<SecretAnswer | undefined> {
    const value = await ask(`${q.retry ? 'Permission denied, please try again.\n' : ''}${q.user}@${q.host}'s password: `, false);
    return { value, remember: false };
  }

  async keyboardInteractive(q: KeyboardInteractiveQuestion): Promise<SecretAnswer<string[]> | undefined> {
    if (q.instructions) process.stderr.write(`${q.instructions}\n`);
    const value: string[] = [];
    for (const p of q.prompts) value.push(await ask(p.prompt, p.echo));
    return { value, remember: false };
  }
}

/** A terminal prompter when stdin and stderr are terminals, otherwise one that explains why it cannot ask. */
export function cliPrompter(): AuthPrompter {
  return process.stdin.isTTY && process.stderr.isTTY ? new TerminalPrompter() : new NonInteractivePrompter();
}

async function ask(question: string, echo: boolean): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = rl.question(question);
    muted = !echo;
    return await answer;
  } finally {
    rl.close();
    if (!echo) process.stderr.write('\n');
  }
}
