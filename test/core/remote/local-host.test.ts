import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
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
    assert.deepEqual((await host.readdir(join(dir, 'a'))).map((e) => [e.name, e.kind, e.size]), [['b.txt', 'file', 10]]);
    await assert.rejects(host.readFile(join(dir, 'nope')), HostFileNotFoundError);
    await host.remove(join(dir, 'a'));
    await assert.rejects(host.stat(join(dir, 'a')), /local: no such file or folder/);
  });
});
