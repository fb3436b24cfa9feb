import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { leaks, makeHostileWorkspace } from './hostile-workspace-fixture';

const CLI = join(__dirname, '../../../dist/cli.js');
const run = promisify(execFile);

/** Runs the built CLI in the hostile repository; its exit code is not the point, what it ran and printed is. */
async function medrl(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: `${e.stdout}${e.stderr}` };
  }
}

// Raw terminal control: ESC (CSI/OSC sequences: colours, titles, OSC 52 clipboard writes, links) and BEL.
const CONTROL = /[\u001b\u0007\u009b]/;

describe('hostile workspace through the CLI: nothing runs, nothing outside the workspace is uploaded or shown', () => {
  const h = makeHostileWorkspace();
  const tried: string[] = [];
  const readOutside: string[] = [];
  const check = (what: string, out: string) => {
    tried.push(what);
    if (leaks(h, out)) readOutside.push(what);
  };
  it("medrl runs: a Ray run folder's setup.sh and ray, shell in job ids and folder names run nothing; escape codes are not printed raw", async () => {
    for (const args of [['runs'], ['runs', '--json'], ['runs', '--host', 'local']]) {
      const r = await medrl(h.dir, ...args);
      check(`medrl ${args.join(' ')}`, r.out);
      assert.doesNotMatch(r.out.replace(/\\u001b/g, ''), CONTROL, `medrl ${args.join(' ')} printed raw terminal control`);
    }
    const listed = await medrl(h.dir, 'runs', '--host', 'local', '--json');
    const hosts = JSON.parse(listed.out.slice(listed.out.indexOf('['), listed.out.lastIndexOf(']') + 1)) as {
      runs: { record: { id: string }; state: string; reason?: string }[];
    }[];
    const ray = hosts.flatMap((x) => x.runs).find((x) => x.record.id === 'evil-ray');
    assert.equal(ray?.state, 'lost');
    assert.match(ray?.reason ?? '', /no ray recorded/);
    assert.deepEqual(h.executed(), []);
  });

  it('medrl services, episodes and dataset inspect run nothing and print no raw escape codes', async () => {
    const cmds = [
      ['services'],
      ['services', '--json'],
      ['episodes', join(h.runsDir, 'evil-pid/rollouts/1.jsonl')],
      ['episodes', join(h.runsDir, 'evil-pid/rollouts/1.jsonl'), '--json'],
      ['dataset', 'inspect', 'data/evil.jsonl'],
    ];
    for (const args of cmds) {
      const r = await medrl(h.dir, ...args);
      check(`medrl ${args.join(' ')}`, r.out);
      assert.doesNotMatch(r.out, CONTROL, `medrl ${args.join(' ')} printed raw terminal control`);
    }
    assert.deepEqual(h.executed(), []);
  });

  it('medrl submit --dry-run: a reward linked out of the workspace is refused before anything reaches the host', async () => {
    const r = await medrl(h.dir, 'submit', 'configs/evil.yaml', '--dry-run');
    check('medrl submit configs/evil.yaml --dry-run', r.out);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /outside the workspace/);
    assert.deepEqual(
      readdirSync(h.runsDir).sort(),
      ['a$(touch${IFS}run-folder-name)', 'evil-pid', 'evil-ray', 'evil-slurm', 'evil-svc', 'stolen-run'],
      'a dry run writes no run folder',
    );
  });

  it('in all: 0 executed, 0 read outside', () => {
    console.log(
      `[hostile-workspace] CLI: ${h.attacks.size} attacks tried (${tried.length} commands): ${h.executed().length} executed, ${readOutside.length} read outside`,
    );
    assert.deepEqual(h.executed(), [], 'attacks whose code ran');
    assert.deepEqual(readOutside, [], 'commands whose output held a file from outside the workspace');
  });
});
