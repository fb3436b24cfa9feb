import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect, type Server } from 'node:net';
import { ScriptedPrompter, startSshd, type SshdFixture } from '../fixtures/sshd';
import { HostConnectionLostError, type SshHost } from '../../../src/core/remote/ssh-host';
import { SshConnectError } from '../../../src/core/remote/ssh-connect';
import { fingerprint } from '../../../src/core/remote/known-hosts';
import { shellQuote } from '../../../src/core/remote/shell-quote';
import { freePort } from '../../e2e/harness/code-server';

describe('SshHost against a real sshd on loopback', () => {
  let sshd: SshdFixture;
  let host: SshHost;
  before(async () => {
    sshd = await startSshd({ encryptedKey: true, agent: true });
    host = sshd.makeHost();
  });
  after(async () => {
    await host?.dispose();
    await sshd?.stop();
  });

  it('key auth: runs commands with env (quoted export lines), cwd and stdin over one connection', async () => {
    const r = await host.exec('printf %s "$GREETING"; pwd; cat; echo oops >&2; exit 3', {
      env: { GREETING: `it's "quoted" $HOME` },
      cwd: '~',
      stdin: 'from stdin',
    });
    assert.equal(r.code, 3);
    assert.equal(r.stdout, `it's "quoted" $HOME${sshd.remoteHome}\nfrom stdin`);
    assert.equal(r.stderr, 'oops\n', 'stderr holds only what the command wrote');
    const before = host.stats().roundTrips;
    await Promise.all(Array.from({ length: 20 }, (_, i) => host.exec(`echo ${i}`)));
    assert.equal(host.stats().roundTrips - before, 20);
    assert.equal(host.state.state, 'connected');
    const sessions = sshd.log().match(/Accepted publickey for root/g) ?? [];
    assert.equal(sessions.length, 1, 'every command used the one connection');
  });

  it('everything written on the host is private: commands under umask 077, SFTP files 0600 (0700 at most), folders 0700', async () => {
    const dir = `${sshd.remoteHome}/private-${Date.now()}`;
    const r = await host.exec(`mkdir -p ${dir}/d && echo x > ${dir}/d/f && stat -c %a ${dir}/d ${dir}/d/f`);
    assert.equal(r.stdout, '700\n600\n');
    const batch = await host.exec(`mkdir ${dir}/b && stat -c %a ${dir}/b`, { batch: true });
    assert.equal(batch.stdout, '700\n', 'the batch shell too');
    await host.writeFile(`${dir}/sftp/new/a.txt`, 'a');
    await host.writeFile(`${dir}/sftp/new/run.sh`, 'echo', { mode: 0o755 });
    await host.exec(`echo open > ${dir}/old.txt && chmod 644 ${dir}/old.txt`);
    await host.writeFile(`${dir}/old.txt`, 'now private');
    await host.mkdir(`${dir}/m/n`);
    const modes = await host.exec(`cd ${dir} && stat -c '%n %a' sftp sftp/new sftp/new/a.txt sftp/new/run.sh old.txt m m/n`);
    assert.equal(modes.stdout, 'sftp 700\nsftp/new 700\nsftp/new/a.txt 600\nsftp/new/run.sh 700\nold.txt 600\nm 700\nm/n 700\n');
  });

  it('files: write (parents made), stat, readdir over SFTP, byte ranges of a large file, remove', async () => {
    await host.writeFile('~/runs/r1/run.json', '{"id":"r1"}', { mode: 0o600 });
    assert.deepEqual(
      (await host.readdir('~/runs/r1')).map((e) => [e.name, e.kind, e.size]),
      [['run.json', 'file', 11]],
    );
    assert.equal((await host.stat('~/runs/r1')).kind, 'directory');
    assert.equal((await host.readFile('~/runs/r1/run.json', { start: 2, end: 4 })).toString(), 'id');
    await assert.rejects(host.readFile('~/runs/nope.txt'), /no such file or folder: ~\/runs\/nope.txt/);
    // 24 MB of random bytes made on the host; ranges read back must match what the host's sha256sum says.
    await host.exec('head -c 25165824 /dev/urandom > ~/big.bin');
    const remoteSum = (await host.exec('sha256sum ~/big.bin')).stdout.split(' ')[0];
    const t = performance.now();
    const whole = await host.readFile('~/big.bin');
    const ms = performance.now() - t;
    console.log(`[hosts] 24 MB read in ${ms.toFixed(0)} ms (${(24 / (ms / 1000)).toFixed(0)} MB/s)`);
    assert.equal(whole.length, 25165824);
    assert.equal(createHash('sha256').update(whole).digest('hex'), remoteSum);
    const middle = await host.readFile('~/big.bin', { start: 1_000_003, end: 9_000_017 });
    assert.ok(middle.equals(whole.subarray(1_000_003, 9_000_017)));
    const pastEnd = await host.readFile('~/big.bin', { start: 25165800, end: 26000000 });
    assert.equal(pastEnd.length, 24, 'a range past the end stops at the end');
    // Ranges of 1 MB and more are streamed by a command rather than SFTP requests: same answers.
    const bigPastEnd = await host.readFile('~/big.bin', { start: 25_000_000, end: 30_000_000 });
    assert.ok(bigPastEnd.equals(whole.subarray(25_000_000)));
    await assert.rejects(host.readFile('~/runs/nope.bin', { start: 0, end: 5_000_000 }), /no such file or folder: ~\/runs\/nope.bin/);
    // Into the caller's buffer (a reader recycling its chunks): a view of it, over SFTP and streamed, short at the end.
    const into = Buffer.alloc(3_000_000, 0xee);
    for (const [start, end] of [
      [7, 70_007],
      [1_000_003, 4_000_003],
      [24_000_000, 27_000_000],
    ] as const) {
      const got = await host.readFile('~/big.bin', { start, end, into });
      assert.equal(got.buffer, into.buffer, `range ${start}-${end} read into the given buffer`);
      assert.ok(got.equals(whole.subarray(start, end)), `range ${start}-${end}`);
    }
    const before = host.stats().bytesRead;
    await host.readFile('~/big.bin', { start: 0, end: 2_000_000 });
    assert.equal(host.stats().bytesRead - before, 2_000_000, 'a range read reads only its bytes');
    assert.equal(await host.resolvePath('~/runs'), `${sshd.remoteHome}/runs`);
    await host.remove('~/runs');
    await assert.rejects(host.stat('~/runs'), /no such file/);
  });

  it('every quick command reports its exit status, even when its whole reply arrives with the exec confirmation', async () => {
    // 400 at once: with a slow listener, ssh2's 'exit' event was missed for ~8% of them and they looked like "exit code null".
    const rs = await Promise.all(Array.from({ length: 400 }, (_, i) => host.exec(`echo ${i}; exit 3`)));
    assert.deepEqual(
      rs.filter((r) => r.code !== 3).map((r) => r.code),
      [],
    );
    assert.deepEqual(
      rs.map((r) => r.stdout),
      rs.map((_, i) => `${i}\n`),
    );
  });

  it('a timeout kills the whole process group the command started', async () => {
    const marker = `medrl-timeout-${process.pid}`;
    const r = await host.exec(`sh -c 'sleep 30; echo ${marker}' & sleep 30`, { timeoutMs: 1000 });
    assert.equal(r.timedOut, true);
    await new Promise((res) => setTimeout(res, 300));
    const left = await host.exec(`pgrep -f ${shellQuote(`echo [m]${marker.slice(1)}`)} || true`);
    assert.equal(left.stdout.trim(), '', 'no process of the command survives');
  });

  it("batch commands run in the connection's long-lived shell: same results, timeouts kill the group, no new session each", async () => {
    const sessionsBefore = (sshd.log().match(/session_new/g) ?? []).length;
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => host.exec(`echo "$X-${i}"; echo e${i} >&2; exit ${i % 3}`, { batch: true, env: { X: "a'b" } })),
    );
    results.forEach((r, i) => assert.deepEqual([r.stdout, r.stderr, r.code], [`a'b-${i}\n`, `e${i}\n`, i % 3]));
    assert.equal((await host.exec('pwd', { batch: true, cwd: '~/..' })).stdout.trim(), sshd.dir);
    const sessions = (sshd.log().match(/session_new/g) ?? []).length - sessionsBefore;
    assert.ok(sessions <= 2, `${sessions} new sessions for 31 batch commands`);
    const marker = `medrl-batch-${process.pid}`;
    const slow = await host.exec(`sh -c 'sleep 30; echo ${marker}' & sleep 30`, { batch: true, timeoutMs: 800 });
    assert.equal(slow.timedOut, true);
    assert.equal((await host.exec('echo still-works', { batch: true })).stdout, 'still-works\n', 'the shell survives a timeout');
    const left = await host.exec(`pgrep -f ${shellQuote(`echo [m]${marker.slice(1)}`)} || true`);
    assert.equal(left.stdout.trim(), '', 'no process of the timed-out command survives');
  });

  it('forwards a port on the host to a local port', async () => {
    const server: Server = createServer((s) => s.on('data', (d) => s.end(`echo:${d.toString()}`)));
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    const fwd = await host.forwardPort(port);
    try {
      assert.notEqual(fwd.localPort, port);
      const answer = await new Promise<string>((resolve, reject) => {
        const s = connect(fwd.localPort, '127.0.0.1', () => s.write('ping'));
        let data = '';
        s.on('data', (d) => (data += d.toString()));
        s.on('end', () => resolve(data));
        s.on('error', reject);
      });
      assert.equal(answer, 'echo:ping');
    } finally {
      await fwd.close();
      server.close();
    }
  });

  it("ssh-agent auth: the agent alias has no key file and connects with the agent's key", async () => {
    const h = sshd.makeHost({ alias: `${sshd.alias}-agent` });
    try {
      assert.equal((await h.exec('echo agent')).stdout, 'agent\n');
      assert.match(sshd.log(), /Accepted publickey for root .*ED25519/);
    } finally {
      await h.dispose();
    }
  });

  it('encrypted key: the passphrase is asked once per session, not per connection', async () => {
    const prompter = new ScriptedPrompter({ passphrase: sshd.passphrase });
    const ctx = sshd.context(prompter);
    const a = sshd.makeHost({ alias: `${sshd.alias}-enc`, context: ctx });
    const b = sshd.makeHost({ alias: `${sshd.alias}-enc`, name: 'second', context: ctx });
    try {
      assert.equal((await a.exec('echo one')).stdout, 'one\n');
      await a.disconnect();
      assert.equal((await a.exec('echo again')).stdout, 'again\n');
      assert.equal((await b.exec('echo two')).stdout, 'two\n');
      assert.deepEqual(prompter.asked, [`passphrase ${sshd.encryptedKey}`]);
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });

  it('encrypted key with a wrong passphrase fails as "auth needed" after three tries', async () => {
    const prompter = new ScriptedPrompter({ passphrase: 'wrong' });
    const h = sshd.makeHost({ alias: `${sshd.alias}-enc`, prompter });
    await assert.rejects(
      h.exec('true'),
      (err: Error) => err instanceof SshConnectError && err.reason === 'auth' && /wrong passphrase/.test(err.message),
    );
    assert.equal(prompter.asked.length, 3);
    assert.equal(h.state.state, 'auth-needed');
    await h.dispose();
  });

  it('a dropped connection fails the command in flight clearly, and the next call reconnects', async () => {
    const h = sshd.makeHost();
    try {
      await h.exec('true');
      const running = h.exec('sleep 30');
      const read = h.exec('sleep 30; echo late');
      const batched = h.exec('sleep 30', { batch: true });
      await new Promise((r) => setTimeout(r, 300));
      const t = performance.now();
      assert.ok(sshd.killConnections() > 0);
      await assert.rejects(
        running,
        (err: Error) =>
          err instanceof HostConnectionLostError &&
          /connection lost .*while running `sleep 30`.*the next call reconnects/.test(err.message),
      );
      await assert.rejects(read, HostConnectionLostError);
      await assert.rejects(batched, HostConnectionLostError);
      assert.ok(performance.now() - t < 5000, 'the failure is reported at once, not after a timeout');
      assert.equal(h.state.state, 'disconnected');
      assert.equal((await h.exec('echo back')).stdout, 'back\n');
      assert.equal((await h.exec('echo batch-back', { batch: true })).stdout, 'batch-back\n');
      assert.equal(h.state.state, 'connected');
    } finally {
      await h.dispose();
    }
  });
});

describe('host keys against real sshd servers', () => {
  it('HashKnownHosts yes: the accepted key is written hashed, and OpenSSH (ssh-keygen -F) finds it', async () => {
    const sshd = await startSshd({ knownHosts: false, aliasConfig: ['HashKnownHosts yes'] });
    try {
      const h = sshd.makeHost({ prompter: new ScriptedPrompter({ hostKey: true }) });
      assert.equal((await h.exec('echo ok')).stdout, 'ok\n');
      await h.dispose();
      const text = readFileSync(sshd.knownHostsPath, 'utf8');
      assert.match(text, /^\|1\|[A-Za-z0-9+/=]{28}\|[A-Za-z0-9+/=]{28} /);
      assert.ok(text.endsWith(` ${sshd.hostPublicKey}\n`) && text.split('\n').length === 2, text);
      const found = spawnSync('ssh-keygen', ['-F', `[127.0.0.1]:${sshd.port}`, '-f', sshd.knownHostsPath], { encoding: 'utf8' });
      assert.equal(found.status, 0, 'ssh-keygen finds the hashed line');
      assert.ok(found.stdout.includes(text.trim()));
    } finally {
      await sshd.stop();
    }
  });

  it("a key in GlobalKnownHostsFile is trusted without a question; the user's known_hosts is not written", async () => {
    const global = join(mkdtempSync(join(tmpdir(), 'medrl-global-kh-')), 'ssh_known_hosts');
    const sshd = await startSshd({ knownHosts: false, aliasConfig: [`GlobalKnownHostsFile ${global}`] });
    try {
      writeFileSync(global, `[127.0.0.1]:${sshd.port} ${sshd.hostPublicKey}\n`);
      writeFileSync(sshd.knownHostsPath, '# mine\n');
      const prompter = new ScriptedPrompter(); // any question fails the connection
      const h = sshd.makeHost({ prompter });
      assert.equal((await h.exec('echo ok')).stdout, 'ok\n');
      await h.dispose();
      assert.deepEqual(prompter.asked, []);
      assert.equal(readFileSync(sshd.knownHostsPath, 'utf8'), '# mine\n');
    } finally {
      await sshd.stop();
    }
  });

  it('unknown host answered yes: the fingerprint is shown, the key appended, and not asked again', async () => {
    const sshd = await startSshd({ knownHosts: false });
    try {
      const expected = fingerprint(Buffer.from(sshd.hostPublicKey.split(' ')[1]!, 'base64'));
      const prompter = new ScriptedPrompter({ hostKey: true });
      const h = sshd.makeHost({ prompter });
      assert.equal((await h.exec('echo ok')).stdout, 'ok\n');
      await h.dispose();
      assert.deepEqual(prompter.asked, [`host-key [127.0.0.1]:${sshd.port} ssh-ed25519 ${expected}`]);
      assert.equal(readFileSync(sshd.knownHostsPath, 'utf8'), `[127.0.0.1]:${sshd.port} ${sshd.hostPublicKey}\n`);
      const again = sshd.makeHost({ prompter: new ScriptedPrompter() });
      assert.equal((await again.exec('echo ok')).stdout, 'ok\n');
      await again.dispose();
    } finally {
      await sshd.stop();
    }
  });

  it('unknown host answered no: not connected, known_hosts untouched', async () => {
    const sshd = await startSshd({ knownHosts: false });
    try {
      writeFileSync(sshd.knownHostsPath, '# mine\n');
      const prompter = new ScriptedPrompter({ hostKey: false });
      const h = sshd.makeHost({ prompter });
      await assert.rejects(
        h.exec('true'),
        (err: Error) => err instanceof SshConnectError && err.reason === 'host-key' && /not accepted; not connected/.test(err.message),
      );
      assert.equal(prompter.asked.length, 1);
      assert.equal(readFileSync(sshd.knownHostsPath, 'utf8'), '# mine\n');
      assert.doesNotMatch(sshd.log(), /Accepted publickey/, 'no authentication happened');
      await h.dispose();
    } finally {
      await sshd.stop();
    }
  });

  it('changed host key (a second sshd with another key on the same [host]:port entry) is refused with the line to remove', async () => {
    const first = await startSshd();
    const second = await startSshd({ knownHosts: false, home: first.home, alias: 'impostor' });
    try {
      // known_hosts says [127.0.0.1]:<second's port> has the first server's key: the second server's key is "changed".
      appendFileSync(second.knownHostsPath, `[127.0.0.1]:${second.port} ${first.hostPublicKey}\n`);
      const line = readFileSync(second.knownHostsPath, 'utf8').trimEnd().split('\n').length;
      const prompter = new ScriptedPrompter({ hostKey: true });
      const h = second.makeHost({ prompter });
      await assert.rejects(h.exec('true'), (err: Error) => {
        assert.ok(err instanceof SshConnectError && err.reason === 'host-key', String(err));
        assert.match(err.message, /WARNING: the host key of \[127\.0\.0\.1\]:\d+ has changed/);
        assert.match(err.message, /man-in-the-middle/);
        assert.ok(err.message.includes(`${second.knownHostsPath}:${line}`), err.message);
        assert.ok(err.message.includes(`remove line ${line} from ${second.knownHostsPath}`), err.message);
        return true;
      });
      assert.deepEqual(prompter.asked, [], 'a changed key is refused without asking');
      assert.doesNotMatch(second.log(), /Accepted publickey/);
      await h.dispose();
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('ProxyJump: reaches a second sshd through the first one', async () => {
    const jump = await startSshd({ alias: 'jump' });
    const target = await startSshd({ alias: 'behind', home: jump.home, aliasConfig: ['ProxyJump jump'] });
    try {
      const h = target.makeHost();
      assert.equal((await h.exec('echo $HOME')).stdout, `${target.remoteHome}\n`);
      assert.match(jump.log(), new RegExp(`target 127\\.0\\.0\\.1 port ${target.port}`), 'the jump host opened the channel to the target');
      await h.dispose();
    } finally {
      await target.stop();
      await jump.stop();
    }
  });

  it('unreachable hosts fail with a clear reason within a bounded wait', async () => {
    const sshd = await startSshd();
    // A TCP server that accepts and never speaks SSH: like a host behind a firewall that swallows packets.
    const accepted: import('node:net').Socket[] = [];
    const silent = createServer((s) => accepted.push(s));
    const silentPort = await freePort();
    await new Promise<void>((r) => silent.listen(silentPort, '127.0.0.1', r));
    const closedPort = await freePort();
    appendFileSync(
      sshd.sshConfigPath,
      `Host silent\n  HostName 127.0.0.1\n  Port ${silentPort}\nHost closed\n  HostName 127.0.0.1\n  Port ${closedPort}\n`,
    );
    try {
      const ctx = { ...sshd.context(), connectTimeoutMs: 2000 };
      const h = sshd.makeHost({ alias: 'silent', context: ctx });
      let t = performance.now();
      await assert.rejects(h.exec('true'), /silent .*unreachable: no SSH answer within 2 s/);
      const waited = performance.now() - t;
      assert.ok(waited >= 1900 && waited < 4000, `waited ${waited} ms`);
      assert.equal(h.state.state, 'unreachable');
      const c = sshd.makeHost({ alias: 'closed', context: ctx });
      t = performance.now();
      await assert.rejects(c.exec('true'), /closed .*unreachable: connection refused by 127\.0\.0\.1:\d+/);
      assert.ok(performance.now() - t < 2000);
      await h.dispose();
      await c.dispose();
    } finally {
      for (const s of accepted) s.destroy();
      silent.close();
      await sshd.stop();
    }
  });
});
