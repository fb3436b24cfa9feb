// Password and keyboard-interactive (2FA) prompts. OpenSSH's sshd offers these only through PAM and the system's user
// passwords, which a test must not change, so this server is ssh2's own SSH server (a real SSH protocol implementation,
// in-process) that runs each command with /bin/sh. Key, agent and host-key behaviour is tested against OpenSSH's sshd.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type Connection } from 'ssh2';
import { ScriptedPrompter } from '../fixtures/sshd';
import { createSshContext } from '../../../src/core/remote/ssh-connect';
import { SshHost } from '../../../src/core/remote/ssh-host';
import type { SecretStore } from '../../../src/core/remote/auth-prompter';
import { defaultSshPaths } from '../../../src/core/remote/ssh-config';

class MemorySecrets implements SecretStore {
  readonly values = new Map<string, string>();
  async get(k: string) {
    return this.values.get(k);
  }
  async store(k: string, v: string) {
    this.values.set(k, v);
  }
  async delete(k: string) {
    this.values.delete(k);
  }
}

describe('password and keyboard-interactive (2FA) prompts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-auth-'));
  let server: Server;
  let port = 0;
  let password = 'hunter2';
  const codes: string[] = [];
  const connections: Connection[] = [];
  const paths = defaultSshPaths(join(dir, 'home'));

  before(async () => {
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'hostkey')]);
    server = new Server({ hostKeys: [readFileSync(join(dir, 'hostkey'))] }, (client) => {
      connections.push(client);
      client.on('error', () => undefined);
      client.on('authentication', (ctx) => {
        if (ctx.method === 'password' && ctx.username === 'pw-user')
          return ctx.password === password ? ctx.accept() : ctx.reject(['password']);
        if (ctx.method === 'keyboard-interactive' && ctx.username === 'otp-user') {
          return ctx.prompt([{ prompt: 'Verification code: ', echo: false }], (answers) => {
            codes.push(answers[0] ?? '');
            return answers[0] === '424242' ? ctx.accept() : ctx.reject(['keyboard-interactive']);
          });
        }
        ctx.reject(ctx.username === 'pw-user' ? ['password'] : ['keyboard-interactive']);
      });
      client.on('session', (accept) => {
        accept().on('exec', (acceptExec, _reject, info) => {
          const stream = acceptExec();
          const p = spawn('/bin/sh', ['-c', info.command], { env: { ...process.env, HOME: dir } });
          stream.pipe(p.stdin);
          p.stdout.pipe(stream, { end: false });
          p.stderr.pipe(stream.stderr, { end: false });
          p.on('close', (code) => {
            stream.exit(code ?? 1);
            stream.end();
          });
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
    mkdirSync(join(dir, 'home/.ssh'), { recursive: true });
    const pub = readFileSync(join(dir, 'hostkey.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(paths.knownHostsPath, `[127.0.0.1]:${port} ${pub}\n`);
    const block = (alias: string, user: string) =>
      `Host ${alias}\n  HostName 127.0.0.1\n  Port ${port}\n  User ${user}\n  IdentityAgent none\n`;
    writeFileSync(paths.sshConfigPath, block('pw', 'pw-user') + block('otp', 'otp-user'));
  });
  after(() => {
    for (const c of connections) c.end();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('2FA is asked once per session: many commands and a refresh reuse the connection without asking again', async () => {
    const prompter = new ScriptedPrompter({ keyboardInteractive: ['424242'] });
    const host = new SshHost('otp', 'otp', createSshContext(paths, prompter));
    for (let i = 0; i < 5; i++) assert.equal((await host.exec(`echo ${i}`)).stdout, `${i}\n`);
    assert.equal((await host.exec('echo batch', { batch: true })).stdout, 'batch\n');
    assert.deepEqual(prompter.asked, ['keyboard-interactive Verification code: ']);
    assert.deepEqual(codes, ['424242']);
    await host.dispose();
  });

  it('a password remembered in the SecretStore is used next session; a refused one is forgotten and asked again', async () => {
    const secrets = new MemorySecrets();
    const first = new ScriptedPrompter({ password: 'hunter2', remember: true });
    const a = new SshHost('pw', 'pw', createSshContext(paths, first, secrets));
    assert.equal((await a.exec('echo in')).stdout, 'in\n');
    await a.dispose();
    assert.deepEqual([...secrets.values.values()], ['hunter2'], 'remembered only because the user asked');

    const second = new ScriptedPrompter();
    const b = new SshHost('pw', 'pw', createSshContext(paths, second, secrets));
    assert.equal((await b.exec('echo again')).stdout, 'again\n');
    assert.deepEqual(second.asked, [], 'a new session takes the remembered password');
    await b.dispose();

    password = 'changed';
    const third = new ScriptedPrompter({ password: 'changed' });
    const c = new SshHost('pw', 'pw', createSshContext(paths, third, secrets));
    assert.equal((await c.exec('echo new')).stdout, 'new\n');
    assert.equal(third.asked.length, 1, 'the refused remembered password led to one question');
    assert.equal(secrets.values.size, 0, 'the refused password was deleted from the SecretStore');
    await c.dispose();
  });

  it('a wrong 2FA code fails as auth needed, saying what was tried', async () => {
    const host = new SshHost('otp', 'otp', createSshContext(paths, new ScriptedPrompter({ keyboardInteractive: ['000000'] })));
    await assert.rejects(host.exec('true'), /authentication failed as otp-user \(tried keyboard-interactive\)/);
    assert.equal(host.state.state, 'auth-needed');
    await host.dispose();
  });
});
