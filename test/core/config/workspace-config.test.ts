import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseWorkspaceConfig } from '../../../src/core/config/load-workspace-config';
import { findHost, workspaceHosts } from '../../../src/core/config/workspace-config';
import { STARTER_CONFIG } from '../../../src/core/config/starter-config';
import { formatProblem } from '../../../src/core/errors/located-error';

describe('medrl.yaml', () => {
  it('the starter file is valid and has the built-in local host', () => {
    const r = parseWorkspaceConfig(STARTER_CONFIG, 'medrl.yaml');
    assert.deepEqual(r.problems, []);
    assert.ok(r.config);
    const hosts = workspaceHosts(r.config);
    assert.deepEqual(
      hosts.map((h) => [h.name, h.kind]),
      [['local', 'local']],
    );
    assert.equal(hosts[0]!.runsDir, '~/.medrl/runs');
  });

  it('an empty file means defaults: local host only', () => {
    const r = parseWorkspaceConfig('', 'medrl.yaml');
    assert.ok(r.config);
    assert.deepEqual(
      workspaceHosts(r.config).map((h) => h.name),
      ['local'],
    );
    assert.equal(r.config.defaults.host, 'local');
  });

  it('resolves SSH hosts with their alias and scheduler, local first', () => {
    const r = parseWorkspaceConfig('hosts:\n  h100: {ssh: gpu-h100, scheduler: slurm}\n  box: {}\n', 'medrl.yaml');
    assert.ok(r.config, JSON.stringify(r.problems));
    const hosts = workspaceHosts(r.config);
    assert.deepEqual(
      hosts.map((h) => [h.name, h.kind, h.sshAlias, h.scheduler]),
      [
        ['local', 'local', undefined, 'ssh'],
        ['h100', 'ssh', 'gpu-h100', 'slurm'],
        ['box', 'ssh', 'box', 'ssh'],
      ],
    );
  });

  it('without medrl.yaml the only host is the built-in local one; an unknown host names the known ones', () => {
    assert.deepEqual(workspaceHosts(), [
      {
        name: 'local',
        kind: 'local',
        sshAlias: undefined,
        runsDir: '~/.medrl/runs',
        workdir: undefined,
        setup: [],
        env: {},
        scheduler: 'ssh',
      },
    ]);
    const r = parseWorkspaceConfig('hosts:\n  gpu1: {}\n', 'medrl.yaml');
    assert.ok(r.config, JSON.stringify(r.problems));
    assert.equal(findHost(r.config, 'gpu1').sshAlias, 'gpu1');
    assert.throws(() => findHost(r.config, 'x'), {
      message: 'unknown host "x": add it under hosts in medrl.yaml (the hosts are local, gpu1)',
    });
    assert.throws(() => findHost(workspaceHosts(), 'x', 'services.judge.host'), /^Error: services\.judge\.host: unknown host "x"/);
  });

  it('reports invalid YAML with its line and column, and no config', () => {
    const r = parseWorkspaceConfig('version: 1\nhosts:\n  local: {\n', 'medrl.yaml');
    assert.equal(r.config, undefined);
    assert.ok(r.problems.length > 0);
    assert.equal(r.problems[0]!.file, 'medrl.yaml');
    assert.ok((r.problems[0]!.line ?? 0) >= 3, `line ${r.problems[0]!.line}`);
    assert.match(r.problems[0]!.message, /^invalid YAML/);
  });

  it('reports duplicate keys instead of silently keeping one', () => {
    const r = parseWorkspaceConfig('hosts:\n  a: {}\n  a: {}\n', 'medrl.yaml');
    assert.equal(r.config, undefined);
    assert.equal(r.problems[0]!.line, 3);
  });

  it('reports every schema error with its line and field', () => {
    const text = [
      'version: 1',
      'hosts:',
      '  local: {ssh: somewhere}',
      '  gpu: {scheduler: pbs}',
      'judges:',
      '  j: {url: "ftp://x", model: m}',
      'defaults:',
      '  host: nowhere',
      '',
    ].join('\n');
    const r = parseWorkspaceConfig(text, 'ws/medrl.yaml');
    assert.equal(r.config, undefined);
    const byField = new Map(r.problems.map((p) => [p.field, p]));
    assert.equal(byField.get('hosts.gpu.scheduler')?.line, 4);
    assert.equal(byField.get('judges.j.url')?.line, 6);
    assert.equal(r.problems.length, 2, r.problems.map(formatProblem).join('\n'));
    // cross-field checks run once the shapes are right
    const r2 = parseWorkspaceConfig('hosts:\n  local: {ssh: somewhere}\ndefaults:\n  host: nowhere\n', 'medrl.yaml');
    const f2 = new Map(r2.problems.map((p) => [p.field, p]));
    assert.equal(f2.get('hosts.local.ssh')?.line, 2);
    assert.match(f2.get('hosts.local.ssh')!.message, /built-in local host/);
    assert.equal(f2.get('defaults.host')?.line, 4);
    assert.match(formatProblem(f2.get('defaults.host')!), /^medrl\.yaml:4:3 \(defaults\.host\): error: unknown host "nowhere"/);
  });

  it('rejects unknown keys, so a typo never passes silently', () => {
    const r = parseWorkspaceConfig('hostz:\n  a: {}\n', 'medrl.yaml');
    assert.equal(r.config, undefined);
    assert.equal(r.problems[0]!.message, 'unknown key "hostz"');
    assert.equal(r.problems[0]!.line, 1);
  });

  it('refuses an API key written in the file: secrets live in SecretStorage', () => {
    const r = parseWorkspaceConfig(
      'judges:\n  j:\n    url: http://127.0.0.1:8000/v1\n    model: Judger\n    apiKey: "1234"\n',
      'medrl.yaml',
    );
    assert.equal(r.config, undefined);
    assert.equal(r.problems[0]!.line, 5);
    assert.equal(r.problems[0]!.field, 'judges.j.apiKey');
    assert.match(r.problems[0]!.message, /SecretStorage/);
  });
});
