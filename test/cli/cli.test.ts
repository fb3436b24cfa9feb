import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';
import { commands } from '../../src/cli/commands';

describe('medrl CLI', () => {
  it('--help lists every command', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    for (const c of commands) assert.ok(r.out.includes(c.path.join(' ')), c.path.join(' '));
  });

  it('every command answers --help with its usage and --json', async () => {
    for (const c of commands) {
      const r = await run([...c.path, '--help']);
      assert.equal(r.code, 0, c.path.join(' '));
      assert.match(r.out, new RegExp(`Usage: medrl ${c.path.join(' ')}`));
      assert.match(r.out, /--json/);
    }
  });

  it('bad usage exits 2 with a message', async () => {
    assert.equal((await run(['nope'])).code, 2);
    const r = await run(['config', 'check', '--bogus']);
    assert.equal(r.code, 2);
    assert.match(r.err, /bogus/);
    assert.equal((await run(['hosts'])).code, 2);
  });

  it('init, config check and hosts list work together, with --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-'));
    assert.equal((await run(['init'], dir)).code, 0);
    assert.equal((await run(['init'], dir)).code, 1, 'init never overwrites');
    const check = await run(['config', 'check', '--json'], dir);
    assert.equal(check.code, 0);
    assert.deepEqual(JSON.parse(check.out), { file: join(dir, 'medrl.yaml'), ok: true, problems: [], hosts: ['local'] });
    const hosts = await run(['hosts', 'list', '--json'], dir);
    assert.equal((JSON.parse(hosts.out) as { name: string }[])[0]!.name, 'local');
  });

  it('config check reports problems with file, line and field, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-'));
    writeFileSync(join(dir, 'medrl.yaml'), 'defaults:\n  host: gpu\n');
    const r = await run(['config', 'check'], dir);
    assert.equal(r.code, 1);
    assert.match(r.out, /medrl\.yaml:2:3 \(defaults\.host\): error: unknown host "gpu"/);
    const j = await run(['config', 'check', '--json'], dir);
    const parsed = JSON.parse(j.out) as { ok: boolean; problems: { line: number; field: string }[] };
    assert.equal(parsed.ok, false);
    assert.deepEqual([parsed.problems[0]!.line, parsed.problems[0]!.field], [2, 'defaults.host']);
  });

  it('a missing medrl.yaml is an error that says where it looked and what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-'));
    const r = await run(['hosts', 'list'], dir);
    assert.equal(r.code, 1);
    assert.ok(r.err.includes(join(dir, 'medrl.yaml')));
    assert.match(r.err, /medrl init/);
  });

  it('demo creates a workspace that validates; schema prints the JSON schemas', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-'));
    const r = await run(['demo', 'ws', '--json'], dir);
    assert.equal(r.code, 0, r.err);
    assert.equal((await run(['config', 'check'], join(dir, 'ws'))).code, 0);
    const s = await run(['schema', 'medrl']);
    const schema = JSON.parse(s.out) as { properties: Record<string, unknown> };
    assert.ok(schema.properties.hosts && schema.properties.judges && schema.properties.datasets && schema.properties.defaults);
    assert.match(readFileSync(join(dir, 'ws/configs/local-demo.yaml'), 'utf8'), /host: local/);
  });
});
