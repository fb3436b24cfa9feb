import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, hostKeyFromBlob, lookupHostKey, verifyHostKey } from '../../../src/core/remote/known-hosts';
import { NonInteractivePrompter } from '../../../src/core/remote/auth-prompter';

const dir = mkdtempSync(join(tmpdir(), 'medrl-kh-'));
/** A real key from ssh-keygen, and what OpenSSH says its fingerprint is. */
function realKey(type: 'ed25519' | 'ecdsa' | 'rsa') {
  const file = join(dir, `${type}-${Math.random().toString(36).slice(2)}`);
  spawnSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-f', file]);
  const pub = readFileSync(`${file}.pub`, 'utf8').trim();
  const fp = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
  return { pub: pub.split(' ').slice(0, 2).join(' '), key: hostKeyFromBlob(Buffer.from(pub.split(' ')[1]!, 'base64')), fp: fp! };
}

describe('known_hosts', () => {
  const ed = realKey('ed25519');
  const ec = realKey('ecdsa');
  const rsa = realKey('rsa');
  const other = realKey('ed25519');

  it('fingerprints match ssh-keygen -l', () => {
    assert.equal(fingerprint(ed.key.blob), ed.fp);
    assert.equal(fingerprint(rsa.key.blob), rsa.fp);
    assert.equal(ed.key.type, 'ssh-ed25519');
  });

  it('finds plain, [host]:port, pattern and hashed (ssh-keygen -H) entries of several key types', () => {
    const file = join(dir, 'kh1');
    writeFileSync(file, `# comment\ngpu1,10.0.0.1 ${ed.pub}\n[gpu2]:2222 ${ec.pub}\n*.cluster,!bad.cluster ${rsa.pub}\nhashme ${other.pub}\n`);
    assert.equal(spawnSync('ssh-keygen', ['-H', '-f', file]).status, 0);
    assert.match(readFileSync(file, 'utf8'), /^\|1\|/m, 'entries are now hashed');
    assert.equal(lookupHostKey([file], 'gpu1', 22, ed.key).status, 'known');
    assert.equal(lookupHostKey([file], 'gpu2', 2222, ec.key).status, 'known');
    assert.equal(lookupHostKey([file], 'gpu2', 22, ec.key).status, 'unknown', 'port matters');
    assert.equal(lookupHostKey([file], 'hashme', 22, other.key).status, 'known');
    const plain = join(dir, 'kh2');
    writeFileSync(plain, `*.cluster,!bad.cluster ${rsa.pub}\n@cert-authority *.cluster ${ed.pub}\n`);
    assert.equal(lookupHostKey([plain], 'n1.cluster', 22, rsa.key).status, 'known');
    assert.deepEqual(lookupHostKey([plain], 'bad.cluster', 22, rsa.key), { status: 'unknown', otherTypes: [] });
    assert.deepEqual(lookupHostKey([plain], 'n1.cluster', 22, ed.key), { status: 'unknown', otherTypes: ['ssh-rsa'] }, 'a CA key is not a host key');
  });

  it('a different key of the same type is "changed" with file and line; @revoked is refused', async () => {
    const file = join(dir, 'kh3');
    writeFileSync(file, `# first\nother ${ec.pub}\ngpu ${ed.pub}\n@revoked * ${rsa.pub}\n`);
    assert.deepEqual(lookupHostKey([file], 'gpu', 22, other.key), { status: 'changed', file, line: 3, knownType: 'ssh-ed25519' });
    assert.deepEqual(lookupHostKey([file], 'gpu', 22, rsa.key), { status: 'revoked', file, line: 4 });
    await assert.rejects(verifyHostKey({ files: [file], appendTo: file, host: 'gpu', port: 22, key: other.key, prompter: new NonInteractivePrompter() }), new RegExp(`remove line 3 from ${file}`));
  });

  it('without a terminal an unknown host fails and says how to add it; nothing is appended', async () => {
    const file = join(dir, 'kh4');
    writeFileSync(file, '');
    await assert.rejects(verifyHostKey({ files: [file], appendTo: file, host: 'newbox', port: 2022, key: ed.key, prompter: new NonInteractivePrompter() }), (e: Error) => e.message.includes(ed.fp) && /ssh-keyscan -p 2022 newbox/.test(e.message));
    assert.equal(readFileSync(file, 'utf8'), '');
  });
});
