import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, hostKeyFromBlob, lookupHostKey, verifyHostKey } from '../../../src/core/remote/known-hosts';
import { NonInteractivePrompter, type AuthPrompter } from '../../../src/core/remote/auth-prompter';

/** Says yes to the host key, asks nothing else. */
const yes: AuthPrompter = Object.assign(new NonInteractivePrompter(), { confirmHostKey: async () => true });
/** What OpenSSH's own lookup (`ssh-keygen -F NAME -f FILE`) finds: the matching lines, or '' when none. */
const keygenFind = (name: string, file: string) =>
  spawnSync('ssh-keygen', ['-F', name, '-f', file], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .join('\n');

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
    writeFileSync(
      file,
      `# comment\ngpu1,10.0.0.1 ${ed.pub}\n[gpu2]:2222 ${ec.pub}\n*.cluster,!bad.cluster ${rsa.pub}\nhashme ${other.pub}\n`,
    );
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
    assert.deepEqual(
      lookupHostKey([plain], 'n1.cluster', 22, ed.key),
      { status: 'unknown', otherTypes: ['ssh-rsa'] },
      'a CA key is not a host key',
    );
  });

  it('a different key of the same type is "changed" with file and line; @revoked is refused', async () => {
    const file = join(dir, 'kh3');
    writeFileSync(file, `# first\nother ${ec.pub}\ngpu ${ed.pub}\n@revoked * ${rsa.pub}\n`);
    assert.deepEqual(lookupHostKey([file], 'gpu', 22, other.key), { status: 'changed', file, line: 3, knownType: 'ssh-ed25519' });
    assert.deepEqual(lookupHostKey([file], 'gpu', 22, rsa.key), { status: 'revoked', file, line: 4 });
    await assert.rejects(
      verifyHostKey({ files: [file], appendTo: file, host: 'gpu', port: 22, key: other.key, prompter: new NonInteractivePrompter() }),
      new RegExp(`remove line 3 from ${file}`),
    );
  });

  it('without a terminal an unknown host fails and says how to add it; nothing is appended', async () => {
    const file = join(dir, 'kh4');
    writeFileSync(file, '');
    await assert.rejects(
      verifyHostKey({ files: [file], appendTo: file, host: 'newbox', port: 2022, key: ed.key, prompter: new NonInteractivePrompter() }),
      (e: Error) => e.message.includes(ed.fp) && /ssh-keyscan -p 2022 newbox/.test(e.message),
    );
    assert.equal(readFileSync(file, 'utf8'), '');
  });

  it('a new host in a hashed file (ssh-keygen -H) is added hashed, and OpenSSH finds it', async () => {
    const file = join(dir, 'kh5');
    writeFileSync(file, `gpu1 ${ed.pub}\n`);
    assert.equal(spawnSync('ssh-keygen', ['-H', '-f', file]).status, 0);
    await verifyHostKey({ files: [file], appendTo: file, host: 'newbox', port: 2222, key: ec.key, prompter: yes });
    const added = readFileSync(file, 'utf8').trimEnd().split('\n').pop()!;
    assert.match(added, /^\|1\|[A-Za-z0-9+/=]{28}\|[A-Za-z0-9+/=]{28} ecdsa-sha2-nistp256 /);
    assert.ok(!readFileSync(file, 'utf8').includes('newbox'), 'the name is not in the file');
    assert.equal(keygenFind('[newbox]:2222', file), added);
    assert.equal(lookupHostKey([file], 'newbox', 2222, ec.key).status, 'known');
  });

  it('HashKnownHosts yes hashes into a plain file; without it, a plain file gets plain lines', async () => {
    const file = join(dir, 'kh6');
    writeFileSync(file, `gpu1 ${ed.pub}\n`);
    await verifyHostKey({ files: [file], appendTo: file, host: 'hashed', port: 22, key: rsa.key, prompter: yes, hash: true });
    const added = readFileSync(file, 'utf8').trimEnd().split('\n').pop()!;
    assert.match(added, /^\|1\|/);
    assert.equal(keygenFind('hashed', file), added);
    const plain = join(dir, 'kh7');
    writeFileSync(plain, `gpu1 ${ed.pub}\n`);
    await verifyHostKey({ files: [plain], appendTo: plain, host: 'open', port: 22, key: rsa.key, prompter: yes });
    assert.equal(readFileSync(plain, 'utf8'), `gpu1 ${ed.pub}\nopen ${rsa.pub}\n`);
  });

  it('a key in a global file (read, not written) is known; the user file is untouched', async () => {
    const global = join(dir, 'ssh_known_hosts');
    writeFileSync(global, `cluster-*.example ${ed.pub}\n`);
    const user = join(dir, 'kh8');
    writeFileSync(user, '');
    await verifyHostKey({
      files: [user, global],
      appendTo: user,
      host: 'cluster-7.example',
      port: 22,
      key: ed.key,
      prompter: new NonInteractivePrompter(),
    });
    assert.equal(readFileSync(user, 'utf8'), '');
  });
});
