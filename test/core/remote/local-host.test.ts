import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { HostFileNotFoundError, execChecked } from '../../../src/core/remote/host';

describe('local host', () => {
  const host = new LocalHost();
  it('runs commands with env, cwd and stdin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lh-'));
    const r = await host.exec('pwd; echo "$X"; cat', { cwd: dir, env: { X: 'x y' }, stdin: 'in' });
    assert.deepEqual([r.code, r.stdout], [0, `${dir}\nx y\nin`]);
  });

  it('a timeout kills the whole process group and says so', async () => {
    const t0 = Date.now();
    const r = await host.exec('sleep 30 & sleep 30; echo never', { timeoutMs: 300 });
    assert.equal(r.timedOut, true);
    assert.equal(r.stdout, '');
    assert.ok(Date.now() - t0 < 5000);
    await assert.rejects(execChecked(host, 'sleep 5', { timeoutMs: 100 }), /local: command failed \(timed out after 100 ms\)/);
  });

  it('reads byte ranges and counts the bytes it read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lh-'));
    await host.writeFile(join(dir, 'a/b.txt'), '0123456789');
    const before = host.stats().bytesRead;
    assert.equal((await host.readFile(join(dir, 'a/b.txt'), { start: 2, end: 5 })).toString(), '234');
    assert.equal((await host.readFile(join(dir, 'a/b.txt'), { start: 8, end: 100 })).toString(), '89');
    assert.equal(host.stats().bytesRead - before, 5);
    assert.deepEqual(
      (await host.readdir(join(dir, 'a'))).map((e) => [e.name, e.kind, e.size]),
      [['b.txt', 'file', 10]],
    );
    await assert.rejects(host.readFile(join(dir, 'nope')), HostFileNotFoundError);
    await host.remove(join(dir, 'a'));
    await assert.rejects(host.stat(join(dir, 'a')), /local: no such file or folder/);
  });

  it('everything it makes is private: commands run under umask 077, files 0600 (0700 at most), folders 0700', async () => {
    const old = process.umask(0o022); // what most users have: the fix must not depend on the caller's umask
    try {
      const dir = mkdtempSync(join(tmpdir(), 'lh-'));
      const r = await execChecked(host, 'mkdir d && echo x > d/f && stat -c %a d d/f', { cwd: dir });
      assert.equal(r.stdout, '700\n600\n');
      const mode = (p: string) => (statSync(join(dir, p)).mode & 0o777).toString(8);
      await host.writeFile(join(dir, 'new/a.txt'), 'a');
      await host.writeFile(join(dir, 'new/run.sh'), 'echo', { mode: 0o755 });
      writeFileSync(join(dir, 'old.txt'), 'open');
      chmodSync(join(dir, 'old.txt'), 0o644);
      await host.writeFile(join(dir, 'old.txt'), 'now private');
      await host.mkdir(join(dir, 'm/n'));
      assert.deepEqual(['new', 'new/a.txt', 'new/run.sh', 'old.txt', 'm', 'm/n'].map(mode), ['700', '600', '700', '600', '700', '700']);
    } finally {
      process.umask(old);
    }
  });
});
