/**
 * Workspace trust on the command line: a cloned repository's setup lines, env and specs run only once the user has run
 * `medrl trust` for it (recorded outside the workspace), and a trusted workspace's setup lines still cannot replace the
 * system tools the host probes use. Real commands on this machine's local host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';
import { writeRunFolder } from '../fixtures/run-folders';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'medrl-trust-')));
const canaries = join(root, 'canaries');
const repo = join(root, 'repo');
const config = join(root, 'config');
const trustFile = join(config, 'medrl', 'trusted-workspaces.json');
let saved: string | undefined;

function makeRepo(): void {
  mkdirSync(canaries);
  mkdirSync(join(repo, 'bin'), { recursive: true });
  // Every tool the host probes call, as the repository ships them: each leaves a canary and prints nothing useful.
  for (const tool of ['awk', 'wc', 'tail', 'sed', 'df', 'find', 'base64', 'tr', 'ls', 'grep', 'head', 'id', 'dirname', 'rm', 'rmdir']) {
    writeFileSync(join(repo, 'bin', tool), `#!/bin/sh\ntouch ${join(canaries, tool)}\n`);
    chmodSync(join(repo, 'bin', tool), 0o755);
  }
  const runsDir = join(root, 'runs');
  writeRunFolder(runsDir, 'run-1', { exitCode: 0 });
  writeFileSync(
    join(repo, 'medrl.yaml'),
    [
      'version: 1',
      'hosts:',
      '  local:',
      `    runsDir: ${JSON.stringify(runsDir)}`,
      '    setup:',
      `      - ${JSON.stringify(`touch ${join(canaries, 'setup-line')}`)}`,
      `      - ${JSON.stringify(`export PATH=${join(repo, 'bin')}:"$PATH"`)}`,
      '',
    ].join('\n'),
  );
  mkdirSync(join(repo, 'configs'));
  writeFileSync(
    join(repo, 'configs', 'x.yaml'),
    'name: x\nframework: verl\nalgorithm: grpo\nhost: local\nmodel: m\ndata:\n  train: d.jsonl\nreward:\n  model: rm\n',
  );
}

describe('medrl trust: the CLI runs a workspace’s setup lines only once it is trusted', () => {
  before(() => {
    saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = config;
    makeRepo();
  });
  after(() => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
  });

  it('untrusted: hosts status, hosts check and submit --dry-run refuse, run nothing and say how to trust the folder', async () => {
    for (const args of [
      ['hosts', 'status', 'local'],
      ['hosts', 'check', 'local'],
      ['submit', 'configs/x.yaml', '--dry-run'],
    ]) {
      const r = await run(args, repo);
      assert.equal(r.code, 1, `medrl ${args.join(' ')}: ${r.err}`);
      assert.match(r.err, new RegExp(`${repo} is not a trusted workspace.*medrl trust ${repo}`), r.err);
    }
    assert.equal(existsSync(join(canaries, 'setup-line')), false, 'no setup line ran');
  });

  it('trusted with `medrl trust`: the setup lines run, but the PATH they set replaces none of the probes’ system tools', async () => {
    const t = await run(['trust'], repo);
    assert.equal(t.code, 0, t.err);
    assert.match(t.out, /trusted \(recorded in .*trusted-workspaces\.json\)/);
    assert.deepEqual(JSON.parse(readFileSync(trustFile, 'utf8')), { version: 1, folders: [repo] });
    const r = await run(['hosts', 'status', 'local', '--json'], repo);
    assert.ok(existsSync(join(canaries, 'setup-line')), 'the setup line ran');
    const status = JSON.parse(r.out) as { runCount: number; disk?: { path: string } };
    assert.equal(status.runCount, 1, r.out + r.err);
    assert.ok(status.disk, 'df answered');
    assert.deepEqual(
      ['awk', 'wc', 'tail', 'sed', 'df', 'find', 'base64', 'tr', 'ls', 'grep', 'head', 'id', 'dirname', 'rm', 'rmdir'].filter((t) =>
        existsSync(join(canaries, t)),
      ),
      [],
      'tools of the repository that ran',
    );
  });

  it('--revoke untrusts it again; a trust file that is not what medrl writes is an error naming it, left as it is', async () => {
    assert.equal((await run(['trust', '--revoke', repo], root)).code, 0);
    assert.equal((await run(['hosts', 'status', 'local'], repo)).code, 1);
    writeFileSync(trustFile, '{"version": 1, "folders": "/"}');
    const r = await run(['trust', repo], root);
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`${trustFile}.*folders`));
    assert.equal(readFileSync(trustFile, 'utf8'), '{"version": 1, "folders": "/"}');
  });

  it('a host without setup or env lines needs no trust: its status runs only MedRL’s own probes', async () => {
    const plain = join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'medrl.yaml'), `version: 1\nhosts:\n  local:\n    runsDir: ${JSON.stringify(join(root, 'runs'))}\n`);
    const r = await run(['hosts', 'status', 'local', '--json'], plain);
    assert.equal(r.code, 0, r.err);
    assert.equal((JSON.parse(r.out) as { runCount: number }).runCount, 1);
  });
});
