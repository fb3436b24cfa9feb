import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSshPaths, listSshAliases, resolveSshRoute } from '../../../src/core/remote/ssh-config';

function home(config: string, extra: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-sshcfg-'));
  mkdirSync(join(dir, '.ssh/conf.d'), { recursive: true });
  writeFileSync(join(dir, '.ssh/config'), config);
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, '.ssh', name), text);
  return defaultSshPaths(dir);
}

describe('~/.ssh/config', () => {
  it('applies Host patterns in order: the first value of each option wins, IdentityFile accumulates', () => {
    const paths = home(
      [
        'Host gpu-*',
        '  User alice',
        '  IdentityFile ~/.ssh/gpu_key',
        'Host gpu-a',
        '  HostName 10.0.0.5',
        '  Port 2200',
        '  User bob',
        'Host *',
        '  IdentityFile ~/.ssh/other',
        '  ServerAliveInterval 20',
        '',
      ].join('\n'),
    );
    const { jumps, target } = resolveSshRoute('gpu-a', paths);
    assert.deepEqual(jumps, []);
    assert.equal(target.hostName, '10.0.0.5');
    assert.equal(target.port, 2200);
    assert.equal(target.user, 'alice');
    assert.deepEqual(target.identityFiles, [join(paths.home, '.ssh/gpu_key'), join(paths.home, '.ssh/other')]);
    assert.equal(target.serverAliveIntervalMs, 20_000);
  });

  it('follows Include (globs, relative to ~/.ssh) and lists only concrete aliases', () => {
    const paths = home('Include conf.d/*.conf\nHost *.internal\n  User ops\n', {});
    writeFileSync(join(paths.home, '.ssh/conf.d/a.conf'), 'Host h100\n  HostName h100.internal\n');
    writeFileSync(join(paths.home, '.ssh/conf.d/b.conf'), 'Host h200 h200-alt !nothing\n  HostName h200.internal\n');
    assert.deepEqual(listSshAliases(paths), ['h100', 'h200', 'h200-alt']);
    assert.equal(resolveSshRoute('h200-alt', paths).target.hostName, 'h200.internal');
  });

  it('ProxyJump with several hops: each hop through the config, user@host:port kept', () => {
    const paths = home(
      [
        'Host bastion',
        '  HostName bastion.example.org',
        '  User jumper',
        'Host gpu',
        '  HostName 10.1.2.3',
        '  ProxyJump bastion,ops@inner:2022',
        '',
      ].join('\n'),
    );
    const { jumps, target } = resolveSshRoute('gpu', paths);
    assert.deepEqual(
      jumps.map((j) => `${j.user}@${j.hostName}:${j.port}`),
      ['jumper@bastion.example.org:22', 'ops@inner:2022'],
    );
    assert.equal(target.hostName, '10.1.2.3');
  });

  it('IdentityAgent: a socket path with ~, none, or the default; ProxyCommand is refused with what to use instead', () => {
    const paths = home(
      ['Host a', '  IdentityAgent ~/.1password/agent.sock', 'Host b', '  IdentityAgent none', 'Host c', '  ProxyCommand nc %h %p', ''].join(
        '\n',
      ),
    );
    assert.equal(resolveSshRoute('a', paths).target.identityAgent, join(paths.home, '.1password/agent.sock'));
    assert.equal(resolveSshRoute('b', paths).target.identityAgent, 'none');
    assert.throws(() => resolveSshRoute('c', paths), /ProxyCommand.*use ProxyJump/);
  });

  it('a bad Port says which file and alias', () => {
    const paths = home('Host x\n  Port ninety\n');
    assert.throws(
      () => resolveSshRoute('x', paths),
      (e: Error) => e.message.includes(paths.sshConfigPath) && /Port of "x"/.test(e.message),
    );
  });

  it("GlobalKnownHostsFile: OpenSSH's two system files by default, the config's files (tokens expanded) when set; HashKnownHosts", () => {
    const paths = home('Host a\n  HashKnownHosts yes\nHost b\n  GlobalKnownHostsFile ~/g1 /etc/g2_%h\n');
    const a = resolveSshRoute('a', { ...paths, globalKnownHostsPaths: undefined }).target;
    assert.deepEqual(a.globalKnownHostsFiles, ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2']);
    assert.equal(a.hashKnownHosts, true);
    const b = resolveSshRoute('b', paths).target;
    assert.deepEqual(b.globalKnownHostsFiles, [join(paths.home, 'g1'), '/etc/g2_b']);
    assert.equal(b.hashKnownHosts, false);
  });
});
