import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addSshHost } from '../../../src/core/config/add-host';
import { parseWorkspaceConfig } from '../../../src/core/config/load-workspace-config';
import { STARTER_CONFIG } from '../../../src/core/config/starter-config';
import { saveConfigText } from '../../../src/core/config/load-workspace-config';
import { chmodSync, closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('adding an SSH host to medrl.yaml', () => {
  it('keeps comments and other keys, and the result is a valid medrl.yaml with the host', () => {
    const text =
      'version: 1\n# my GPU boxes\nhosts:\n  local: {}   # built in\n  h100:\n    ssh: h100 # first box\ndefaults:\n  host: h100\n';
    const out = addSshHost(text, 'h200', 'h200-login', 'medrl.yaml');
    assert.match(out, /# my GPU boxes/);
    assert.match(out, /ssh: h100 # first box/);
    assert.match(out, /local: {} +# built in/, 'the comment stays on its line');
    assert.match(out, /  h200:\n    ssh: h200-login\n/);
    const { config } = parseWorkspaceConfig(out, 'medrl.yaml');
    assert.equal(config?.hosts.h200?.ssh, 'h200-login');
    assert.equal(config?.defaults.host, 'h100');
  });

  it('works on the starter file and refuses a duplicate or a bad name', () => {
    const out = addSshHost(STARTER_CONFIG, 'gpu', 'gpu', 'medrl.yaml');
    assert.equal(parseWorkspaceConfig(out, 'medrl.yaml').config?.hosts.gpu?.ssh, 'gpu');
    assert.throws(() => addSshHost(out, 'gpu', 'gpu', 'medrl.yaml'), /medrl.yaml: host "gpu" is already there/);
    assert.throws(() => addSshHost(out, 'a b', 'a b', 'medrl.yaml'), /cannot be a host name/);
  });

  it('a CRLF medrl.yaml stays CRLF: only the new lines are added', () => {
    const text = 'version: 1\r\n# boxes\r\nhosts:\r\n  h100:\r\n    ssh: h100\r\n';
    const out = addSshHost(text, 'h200', 'h200', 'medrl.yaml');
    assert.equal(out.replace(/\r\n/g, '').includes('\n'), false, 'no bare LF');
    assert.ok(out.startsWith(text), 'the lines before are byte for byte the same');
    assert.equal(out.slice(text.length), '  h200:\r\n    ssh: h200\r\n');
  });
});

describe('saving medrl.yaml', () => {
  it('replaces the file atomically: a reader holding the old file sees all of it, never a half; the mode stays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-save-'));
    const file = join(dir, 'medrl.yaml');
    const old = `version: 1\n${'# old line\n'.repeat(10_000)}`;
    writeFileSync(file, old);
    chmodSync(file, 0o600);
    const fd = openSync(file, 'r');
    await saveConfigText(file, 'version: 1\nhosts: {}\n');
    // An in-place write truncates the file the reader has open; a rename leaves it whole.
    const buf = Buffer.alloc(old.length + 10);
    const n = readSync(fd, buf, 0, buf.length, 0);
    closeSync(fd);
    assert.equal(buf.subarray(0, n).toString(), old);
    assert.equal(readFileSync(file, 'utf8'), 'version: 1\nhosts: {}\n');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['medrl.yaml'], 'no temporary file is left');
  });
});
