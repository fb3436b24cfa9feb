import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';

/** A workspace whose local host has one finished run, its output.log holding `log`. */
function workspaceWithLog(log: string): string {
  const root = mkdtempSync(join(tmpdir(), 'medrl-logs-cli-'));
  const runsDir = join(root, 'runs');
  const dir = join(runsDir, 'run-1');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(runsDir, '.medrl-runs'), '');
  writeFileSync(join(dir, '.medrl-run'), '');
  const record = {
    id: 'run-1',
    name: 'demo',
    kind: 'train',
    framework: 'verl',
    algorithm: 'grpo',
    host: 'local',
    scheduler: 'ssh',
    created: '2026-12-01T00:00:00Z',
    dir,
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record));
  writeFileSync(join(dir, 'output.log'), log);
  writeFileSync(join(dir, 'exit_code'), '0\n');
  writeFileSync(join(root, 'medrl.yaml'), `hosts:\n  local:\n    runsDir: ${JSON.stringify(runsDir)}\n`);
  return root;
}

describe('medrl logs', () => {
  const hostile = 'step:1 - loss:0.5\n\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[2J\x1b[Hclean\n\x1b[32mcoloured\x1b[0m\x9b31m\n';

  it("escapes a log's terminal control sequences (clipboard, screen clearing), keeping only colours", async () => {
    const r = await run(['logs', 'run-1'], workspaceWithLog(hostile));
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'step:1 - loss:0.5\n\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b[2J\\x1b[Hclean\n\x1b[32mcoloured\x1b[0m\\x9b31m\n');
  });

  it('prints the log as it is with --raw', async () => {
    const r = await run(['logs', 'run-1', '--raw'], workspaceWithLog(hostile));
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, hostile);
  });
});
