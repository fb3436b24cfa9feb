/**
 * Slow and broken servers: judge servers (node http on loopback) that drip, stall mid-body, answer garbage or huge bodies
 * and send long Retry-After; SSH servers that accept and never speak, stop answering during authentication (a real sshd
 * waiting on its keys command) or freeze mid-session (a real sshd's connection processes stopped). Every call ends
 * within its stated deadline, memory stays bounded, every sample gets a result.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { execFile } from 'node:child_process';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JudgeClient } from '../../../src/core/judge/judge-client';
import { judgeSamples } from '../../../src/core/judge/judge-scorer';
import { parseScoreSpec } from '../../../src/core/scoring/score-parser';
import type { RewardSample } from '../../../src/core/scoring/sample';
import { ScriptedPrompter, startSshd, type SshdFixture } from '../fixtures/sshd';
import { BATCH_KILL_GRACE_MS } from '../../../src/core/remote/batch-shell';

const MARGIN_MS = 2500; // a loaded 2-core CI machine
const CLI = join(process.env.MEDRL_ROOT ?? join(__dirname, '../../..'), 'dist/cli.js');
const sample = (s: string): RewardSample => ({ data_source: 'x', solution_str: s, ground_truth: 'y' });
const answer = (content: string) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });
const secs = (ms: number) => (ms / 1000).toFixed(1);

/** One loopback server; the path's first part picks the misbehaviour: /drip/v1/chat/completions, ... */
function startJudge(): Promise<{ url: (kind: string) => string; server: Server; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const kind = req.url!.split('/')[1]!;
    hits.set(kind, (hits.get(kind) ?? 0) + 1);
    req.resume();
    req.on('end', () => {
      switch (kind) {
        case 'ok':
          res.writeHead(200, { 'content-type': 'application/json' }).end(answer('1'));
          return;
        case 'drip': {
          // headers at once, then one byte of a valid answer every 300 ms: never done in time
          res.writeHead(200, { 'content-type': 'application/json' });
          const body = answer(`1${' '.repeat(10_000)}`);
          let i = 0;
          const t = setInterval(() => (i < body.length ? res.write(body[i++]!) : res.end()), 300);
          timers.add(t);
          res.on('close', () => clearInterval(t));
          return;
        }
        case 'stall': // half an answer, then silence with the connection open
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(answer('1').slice(0, 30));
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' }).end('<html>502 Bad Gateway</html>');
          return;
        case 'huge': {
          // 100 MB, chunked (no Content-Length), written as fast as the client reads
          res.writeHead(200, { 'content-type': 'application/json' });
          const chunk = Buffer.alloc(64 * 1024, 'a');
          let sent = 0;
          res.write('{"choices":[{"index":0,"message":{"role":"assistant","content":"');
          const pump = () => {
            while (sent < 100 * 1024 * 1024) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end('"}}]}');
          };
          res.on('error', () => undefined);
          pump();
          return;
        }
        case 'huge-declared':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024) });
          res.write('{"choices":');
          return;
        case 'retry-after':
          res
            .writeHead(429, { 'content-type': 'application/json', 'retry-after': '3600' })
            .end(JSON.stringify({ error: { message: 'slow down' } }));
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  server.on('close', () => timers.forEach(clearInterval));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({ url: (kind) => `http://127.0.0.1:${port}/${kind}/v1`, server, hits });
    }),
  );
}

describe('slow and broken judge servers', () => {
  let judge: Awaited<ReturnType<typeof startJudge>>;
  before(async () => {
    judge = await startJudge();
  });
  after(() => {
    judge.server.closeAllConnections();
    judge.server.close();
  });

  const client = (kind: string, extra: { timeoutMs?: number; maxConcurrency?: number; attempts?: number } = {}) =>
    new JudgeClient(
      { name: kind, url: judge.url(kind), model: 'm', timeoutMs: extra.timeoutMs ?? 2000, maxConcurrency: extra.maxConcurrency },
      undefined,
      { attempts: extra.attempts ?? 2, baseDelayMs: 50, maxDelayMs: 100 },
    );

  for (const [kind, what] of [
    ['drip', 'drip judge'],
    ['stall', 'judge stalled mid-body'],
  ] as const) {
    it(`${what}: every attempt ends at the timeout, body included`, async () => {
      const t0 = Date.now();
      const call = await client(kind).chat([{ role: 'user', content: 'q' }]);
      const ms = Date.now() - t0;
      const deadline = 2 * 2000 + 100;
      console.log(`[slow-servers] ${what}: ended in ${secs(ms)} s (deadline ${secs(deadline)} s)`);
      assert.equal(call.raw, null);
      assert.equal(call.error, 'no complete answer within 2 s (after 2 attempts)');
      assert.ok(ms < deadline + MARGIN_MS, `${ms} ms`);
    });
  }

  it('garbage answers are retried, then reported per row', async () => {
    const t0 = Date.now();
    const res = await judgeSamples({ client: client('garbage'), template: '{solution_str}', parser: parseScoreSpec('number') }, [
      sample('a'),
      sample('b'),
    ]);
    console.log(`[slow-servers] garbage judge: ${res.length} rows reported in ${secs(Date.now() - t0)} s`);
    assert.deepEqual(
      res.map((r) => r.index),
      [0, 1],
    );
    for (const r of res) assert.match(r.error!, /^malformed JSON from the server \(.*\) \(after 2 attempts\)$/);
  });

  it('a 100 MB answer is refused while it streams, in bounded memory, at any concurrency', async () => {
    const c = client('huge', { maxConcurrency: 4, attempts: 1, timeoutMs: 30_000 });
    const base = process.memoryUsage();
    let peakHeap = 0;
    let peakRss = 0;
    const probe = setInterval(() => {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
      peakRss = Math.max(peakRss, m.rss - base.rss);
    }, 20);
    const t0 = Date.now();
    const calls = await Promise.all([1, 2, 3, 4].map((i) => c.chat([{ role: 'user', content: `q${i}` }])));
    clearInterval(probe);
    const mb = (b: number) => Math.round(b / 1024 / 1024);
    console.log(
      `[slow-servers] 100 MB answer x4 at once: +${mb(peakHeap)} MB heap, +${mb(peakRss)} MB RSS, refused in ${secs(Date.now() - t0)} s`,
    );
    for (const call of calls)
      assert.match(call.error!, /^the judge's answer passed the 4 MiB limit while streaming; refused, the rest unread$/);
    assert.ok(peakHeap < 64 * 1024 * 1024, `heap grew ${mb(peakHeap)} MB`);
    const declared = await client('huge-declared').chat([{ role: 'user', content: 'q' }]);
    assert.match(declared.error!, /^the judge's answer is 100 MiB \(Content-Length\), over the 4 MiB limit; refused unread$/);
    assert.equal(declared.attempts, 1, 'a too-large answer is not retried');
  });

  it('Retry-After: 3600 fails the row at once and says so', async () => {
    const t0 = Date.now();
    const call = await client('retry-after', { attempts: 5 }).chat([{ role: 'user', content: 'q' }]);
    const ms = Date.now() - t0;
    console.log(`[slow-servers] Retry-After 3600: row failed in ${secs(ms)} s (cap 60 s)`);
    assert.equal(
      call.error,
      '429 slow down; the judge asked to retry after 3600 s (Retry-After), longer than the 60 s MedRL waits: not retried',
    );
    assert.ok(ms < 1000 + MARGIN_MS);
  });

  it('a batch deadline ends every row by then, each reported', async () => {
    const c = client('stall', { timeoutMs: 60_000, maxConcurrency: 2, attempts: 5 });
    const t0 = Date.now();
    const res = await judgeSamples(
      { client: c, template: '{solution_str}', parser: parseScoreSpec('number') },
      Array.from({ length: 20 }, (_, i) => sample(`s${i}`)),
      { deadlineMs: 3000 },
    );
    const ms = Date.now() - t0;
    console.log(
      `[slow-servers] 20 rows to a stalled judge: all ${res.filter(Boolean).length} reported in ${secs(ms)} s (batch deadline 3.0 s)`,
    );
    assert.equal(res.filter(Boolean).length, 20);
    assert.deepEqual(
      res.slice(0, 2).map((r) => r.error),
      Array(2).fill('stopped: the batch deadline (3 s) passed while the judge was answering'),
    );
    assert.deepEqual(
      res.slice(2).map((r) => r.error),
      Array(18).fill('not judged: the batch deadline (3 s) passed before its turn'),
    );
    assert.ok(ms < 3000 + MARGIN_MS, `${ms} ms`);
  });
  it('medrl judge run --deadline: the built CLI ends by the deadline with every row reported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-deadline-'));
    writeFileSync(
      join(dir, 'medrl.yaml'),
      `version: 1\njudges:\n  judge:\n    url: ${judge.url('stall')}\n    model: m\n    timeoutSeconds: 60\n`,
    );
    writeFileSync(join(dir, 's.jsonl'), Array.from({ length: 6 }, (_, i) => JSON.stringify(sample(`s${i}`))).join('\n') + '\n');
    const t0 = Date.now();
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [CLI, 'judge', 'run', '--samples', 's.jsonl', '--no-cache', '--deadline', '3', '--json'],
        { cwd: dir, env: { ...process.env, MEDRL_JUDGE_API_KEY: 'k' } },
        (_err, out) => resolve({ code: child.exitCode, stdout: out }),
      );
    });
    const ms = Date.now() - t0;
    const rows = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { error: string | null });
    console.log(`[slow-servers] medrl judge run --deadline 3 on a stalled judge: ${rows.length} rows reported in ${secs(ms)} s`);
    assert.equal(code, 1);
    assert.equal(rows.length, 6);
    assert.ok(
      rows.every((r) => /the batch deadline \(3 s\)/.test(r.error ?? '')),
      stdout,
    );
    assert.ok(ms < 3000 + 2 * MARGIN_MS, `${ms} ms`); // node's start-up on top of the deadline
  });
});

describe('slow and broken SSH servers', () => {
  const DEADLINE_MS = 2000;
  let sshd: SshdFixture;
  let stalling: SshdFixture;
  const accepted: Socket[] = [];
  const silent = createTcpServer((s) => accepted.push(s));
  before(async () => {
    sshd = await startSshd();
    // A real sshd that stalls in authentication: the command that would list authorized keys never ends (sshd waits for
    // it until LoginGraceTime, 120 s by default). The Match block overrides the fixture's AuthorizedKeysFile.
    stalling = await startSshd({
      alias: 'stalls',
      home: sshd.home,
      sshdConfig: [
        'AuthorizedKeysCommand /usr/bin/sleep 3600',
        'AuthorizedKeysCommandUser root',
        'Match User root',
        '  AuthorizedKeysFile none',
      ],
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    appendFileSync(sshd.sshConfigPath, `Host silent\n  HostName 127.0.0.1\n  Port ${(silent.address() as AddressInfo).port}\n`);
  });
  after(async () => {
    accepted.forEach((s) => s.destroy());
    silent.close();
    await stalling?.stop();
    await sshd?.stop();
  });

  const timed = async (what: string, deadline: number, fn: () => Promise<unknown>, error: RegExp) => {
    const t0 = Date.now();
    await assert.rejects(fn(), (e: Error) => (assert.match(e.message, error), true));
    const ms = Date.now() - t0;
    console.log(`[slow-servers] ${what}: ended in ${secs(ms)} s (deadline ${secs(deadline)} s)`);
    assert.ok(ms < deadline + MARGIN_MS, `${what}: ${ms} ms`);
  };

  it('a server that accepts and never speaks SSH: the connect ends at its deadline; the host shows unreachable', async () => {
    const h = sshd.makeHost({ alias: 'silent', context: { ...sshd.context(), connectTimeoutMs: DEADLINE_MS } });
    await timed(
      'silent SSH server',
      DEADLINE_MS,
      () => h.connect(),
      /^silent \(\w+@127\.0\.0\.1:\d+\): unreachable: no SSH answer within 2 s \(host down, firewall, or wrong HostName\/Port\?\)$/,
    );
    assert.equal(h.state.state, 'unreachable');
    await h.dispose();
  });

  it('a real sshd that stops answering during authentication: the connect ends at its deadline, naming the stage', async () => {
    const h = stalling.makeHost({ alias: 'stalls', context: { ...stalling.context(), connectTimeoutMs: DEADLINE_MS } });
    await timed(
      'sshd stalled in authentication',
      DEADLINE_MS,
      () => h.exec('true'),
      /^stalls \(root@127\.0\.0\.1:\d+\): no SSH answer within 2 s during authentication as root \(the server stopped answering after the key exchange\)/,
    );
    assert.equal(h.state.state, 'unreachable');
    assert.match(stalling.log(), /userauth_pubkey: publickey test pkalg ssh-ed25519/, 'sshd was checking the key when the client gave up');
    assert.doesNotMatch(stalling.log(), /Accepted publickey/);
    await h.dispose();
  });

  it('a connected sshd that stops answering: exec and SFTP channel requests end at their deadline, naming host and stage', async () => {
    const h = sshd.makeHost({ context: { ...sshd.context(), requestTimeoutMs: DEADLINE_MS } });
    await h.exec('true');
    await h.exec('true', { batch: true }); // opens the connection's long-lived shell
    assert.ok(sshd.signalConnections('SIGSTOP') > 0, "the connection's sshd processes are frozen");
    try {
      await timed(
        'exec on a frozen sshd',
        DEADLINE_MS,
        () => h.exec('echo hi'),
        new RegExp(`^${sshd.alias}: the SSH server did not answer within 2 s while opening a channel for running \`echo hi\`$`),
      );
      await timed(
        'SFTP on a frozen sshd',
        DEADLINE_MS,
        () => h.stat('/etc/hostname'),
        new RegExp(`^${sshd.alias}: the SSH server did not answer within 2 s while opening an SFTP channel$`),
      );
      // A command in the batch shell (host status, the Hosts view): its timeout, then the grace for the kill to be reported.
      const t0 = Date.now();
      const r = await h.exec('echo hi', { batch: true, timeoutMs: 1000 });
      const ms = Date.now() - t0;
      const deadline = 1000 + BATCH_KILL_GRACE_MS;
      console.log(`[slow-servers] batch command on a frozen sshd: ended in ${secs(ms)} s (deadline ${secs(deadline)} s)`);
      assert.deepEqual([r.timedOut, r.code], [true, null]);
      assert.ok(ms < deadline + MARGIN_MS, `${ms} ms`);
    } finally {
      sshd.signalConnections('SIGCONT');
    }
    await h.dispose();
  });

  it('a slow user is not a slow server: the time a passphrase question is open does not count', async () => {
    const enc = await startSshd({ alias: 'slowuser', home: sshd.home, encryptedKey: true });
    try {
      const prompter = new ScriptedPrompter({ passphrase: enc.passphrase });
      const slow = Object.assign(prompter, {
        passphrase: async (q: { host: string; keyFile: string }) => {
          await new Promise((r) => setTimeout(r, 2 * DEADLINE_MS)); // the user types for twice the deadline
          return ScriptedPrompter.prototype.passphrase.call(prompter, q);
        },
      });
      const h = enc.makeHost({ alias: 'slowuser-enc', context: { ...enc.context(slow), connectTimeoutMs: DEADLINE_MS } });
      assert.equal((await h.exec('echo ok')).stdout, 'ok\n');
      assert.deepEqual(prompter.asked.length, 1);
      await h.dispose();
    } finally {
      await enc.stop();
    }
  });
});
