import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addSshHost } from '../../../src/core/config/add-host';
import { parseWorkspaceConfig } from '../../../src/core/config/load-workspace-config';
import { STARTER_CONFIG } from '../../../src/core/config/starter-config';

describe('adding an SSH host to medrl.yaml', () => {
  it('keeps comments and other keys, and the result is a valid medrl.yaml with the host', () => {
    const text = 'version: 1\n# my GPU boxes\nhosts:\n  local: {}   # built in\n  h100:\n    ssh: h100 # first box\ndefaults:\n  host: h100\n';
    const out = addSshHost(text, 'h200', 'h200-login', 'medrl.yaml');
    assert.match(out, /# my GPU boxes/);
    assert.match(out, /ssh: h100 # first box/);
    assert.match(out, /local: {} +# built in/, "the comment stays on its line");
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
});
