import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { WorkspaceConfinedHost } from '../../../src/vscode/hosts/workspace-confined-host';

describe('the local host of an untrusted workspace (Restricted Mode)', () => {
  const outside = mkdtempSync(join(tmpdir(), 'medrl-outside-'));
  writeFileSync(join(outside, 'id_ed25519'), 'PRIVATE KEY');
  const ws = mkdtempSync(join(tmpdir(), 'medrl-ws-'));
  mkdirSync(join(ws, 'data'));
  writeFileSync(join(ws, 'data/train.jsonl'), '{"a":1}\n');
  symlinkSync(join(outside, 'id_ed25519'), join(ws, 'data/key.jsonl'));
  symlinkSync(outside, join(ws, 'data/elsewhere'));
  const host = new WorkspaceConfinedHost(
    new LocalHost(),
    () => [ws],
    (what) => new Error(`${what}: untrusted`),
  );

  it('reads files of the workspace', async () => {
    assert.equal((await host.readFile(join(ws, 'data/train.jsonl'))).toString(), '{"a":1}\n');
    assert.deepEqual((await host.readdir(join(ws, 'data'))).map((e) => e.name).sort(), ['elsewhere', 'key.jsonl', 'train.jsonl']);
  });

  it('refuses paths outside it, links that lead out of it included', async () => {
    await assert.rejects(host.readFile(join(outside, 'id_ed25519')), /Reading .*id_ed25519, outside the workspace,: untrusted/);
    await assert.rejects(host.readFile(join(ws, 'data/key.jsonl')), /key\.jsonl \(a link to .*id_ed25519\), outside the workspace/);
    await assert.rejects(host.readdir(join(ws, 'data/elsewhere')), /outside the workspace/);
    await assert.rejects(host.stat(join(ws, '../')), /outside the workspace/);
    await assert.rejects(
      (async () => {
        for await (const _ of host.readChunks(join(ws, 'data/key.jsonl'))) void _;
      })(),
      /outside the workspace/,
    );
    await assert.rejects(host.writeFile(join(ws, 'data/elsewhere/new.txt'), 'x'), /outside the workspace/);
    assert.equal(existsSync(join(outside, 'new.txt')), false);
  });

  it('runs nothing and forwards no port', async () => {
    const canary = join(ws, 'canary');
    await assert.rejects(host.exec(`touch ${canary}`), /Running commands: untrusted/);
    await assert.rejects(host.spawn(`touch ${canary}`), /Running commands: untrusted/);
    await assert.rejects(host.forwardPort(22), /Forwarding ports/);
    assert.equal(existsSync(canary), false);
  });
});
