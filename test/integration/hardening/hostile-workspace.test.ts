import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { leaks, makeHostileWorkspace } from './hostile-workspace-fixture';

const CLI = join(__dirname, '../../../dist/cli.js');
const run = promisify(execFile);

// A user who has trusted no workspace: their own config folder, empty (the test runner's trusts every temporary folder).
const untrusted = { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'medrl-config-')) };

/** Runs the built CLI in the hostile repository; its exit code is not the point, what it ran and printed is. */
async function medrl(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { cwd, env: untrusted, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
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

  it('medrl runs: FIFOs, a 100 MB run.json and a linked run.json cost only their folders; the listing deletes no folder', async () => {
    const started = Date.now();
    const r = await medrl(h.dir, 'runs', '--host', 'local', '--json');
    const took = Date.now() - started;
    check('medrl runs (crafted run folders)', r.out);
    assert.ok(took < 20_000, `medrl runs took ${took} ms`);
    const listed = JSON.parse(r.out.slice(r.out.indexOf('['), r.out.lastIndexOf(']') + 1)) as {
      runs: { record: { id: string } }[];
      problems: { file: string; message: string }[];
    }[];
    const ids = listed.flatMap((x) => x.runs.map((run) => run.record.id));
    for (const id of ['evil-pid', 'evil-ray', 'fifo-log', 'fifo-exit']) assert.ok(ids.includes(id), `${id} listed: ${ids.join(', ')}`);
    const problems = listed.flatMap((x) => x.problems);
    for (const f of ['fifo-log/output.log', 'fifo-exit/exit_code', 'huge-json/run.json', 'linked-json/run.json'])
      assert.ok(
        problems.some((p) => p.file.endsWith(`/${f}`) && /not read/.test(p.message)),
        `${f} reported: ${JSON.stringify(problems)}`,
      );
    for (const d of ['empty-mount', 'forged-cut']) assert.ok(existsSync(join(h.runsDir, d)), `${d} was removed by the listing`);
    assert.ok(existsSync(join(h.runsDir, 'forged-cut/run.json.tmp')));
  });

  it('medrl hosts status and check refuse to run the setup lines and env of an untrusted workspace, and say how to trust it', async () => {
    for (const args of [
      ['hosts', 'status', 'local'],
      ['hosts', 'check', 'local'],
    ]) {
      const r = await medrl(h.dir, ...args);
      check(`medrl ${args.join(' ')}`, r.out);
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /is not a trusted workspace\. Read its medrl\.yaml and run specs, then trust it: medrl trust /);
    }
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

  it('medrl submit --dry-run: refused until the workspace is trusted; trusted, a reward linked out of it is refused before anything reaches the host', async () => {
    const untrustedRun = await medrl(h.dir, 'submit', 'configs/evil.yaml', '--dry-run');
    check('medrl submit configs/evil.yaml --dry-run (untrusted)', untrustedRun.out);
    assert.equal(untrustedRun.code, 1);
    assert.match(untrustedRun.out, /not a trusted workspace.*medrl trust /);
    const trusted = await medrl(h.dir, 'trust');
    assert.equal(trusted.code, 0, trusted.out);
    const r = await medrl(h.dir, 'submit', 'configs/evil.yaml', '--dry-run');
    assert.equal((await medrl(h.dir, 'trust', '--revoke')).code, 0);
    check('medrl submit configs/evil.yaml --dry-run', r.out);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /outside the workspace/);
    assert.deepEqual(
      readdirSync(h.runsDir).sort(),
      [
        'a$(touch${IFS}run-folder-name)',
        'empty-mount',
        'evil-pid',
        'evil-ray',
        'evil-slurm',
        'evil-svc',
        'fifo-exit',
        'fifo-log',
        'forged-cut',
        'huge-json',
        'linked-json',
        'stolen-run',
      ],
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
