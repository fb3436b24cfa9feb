import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeDenseVerlLog } from '../../core/metrics/verl-log-generator';

const ROOT = join(__dirname, '../../..');

/** Runs `medrl ARGS | head -n 2` in bash (the bundled CLI, dist/cli.js): what head printed, what medrl wrote on stderr, and medrl's exit status. */
function throughHead(args: string[]): { lines: string[]; stderr: string; status: number } {
  const script = `"$0" "$@" 2>"$ERR_FILE" | head -n 2; echo "status:\${PIPESTATUS[0]}"`;
  const dir = mkdtempSync(join(tmpdir(), 'medrl-pipe-'));
  try {
    const errFile = join(dir, 'stderr');
    const r = spawnSync('bash', ['-c', script, process.execPath, join(ROOT, 'dist/cli.js'), ...args], {
      encoding: 'utf8',
      env: { ...process.env, ERR_FILE: errFile },
    });
    const out = r.stdout.trim().split('\n');
    const status = Number(out.pop()!.replace('status:', ''));
    return { lines: out, stderr: readFileSync(errFile, 'utf8'), status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bundled CLI (dist/cli.js) read by a pipe that closes early, as `medrl metrics big.log | head` does. */
describe('medrl metrics into a pipe that closes early (| head)', () => {
  let dir: string;
  let log: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'medrl-pipe-log-'));
    log = join(dir, 'output.log');
    // About 4,000 steps: their JSON and table are many times what a pipe holds, so medrl is still writing when head exits.
    await writeDenseVerlLog(log, 8e6);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--json: head gets the first steps, and medrl stops quietly with exit code 0 (no EPIPE error)', () => {
    const r = throughHead(['metrics', log, '--json']);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.deepEqual(
      r.lines.map((l) => (JSON.parse(l) as { step: number }).step),
      [1, 2],
    );
  });

  it('the table: head gets its first lines, and medrl stops quietly with exit code 0', () => {
    const r = throughHead(['metrics', log]);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.match(r.lines[0]!, /\(verl\): \d+ step\(s\), 64 metric\(s\)$/);
  });
});

describe('medrl phi scan into a pipe that closes early (| head)', () => {
  it('head gets the first findings, and the scan stops with its counts on stderr and no EPIPE error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-pipe-phi-'));
    try {
      const file = join(dir, 'notes.jsonl');
      // 3,000 rows with a phone number each: their findings are many times what a pipe holds.
      const rows = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ note: `Call 555-${String(100 + (i % 900))}-4567 today.` }));
      writeFileSync(file, `${rows.join('\n')}\n`);
      const r = throughHead(['phi', 'scan', file, '--json']);
      assert.doesNotMatch(r.stderr, /EPIPE|Error/);
      assert.equal(r.status, 1, 'findings: exit code 1, as a linter');
      assert.deepEqual(
        r.lines.map((l) => (JSON.parse(l) as { line: number; category: string }).line),
        [1, 2],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--threads 2 (a file of 16 MB or more): the bundled worker threads write what one thread writes, and | head stops them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-pipe-phi-'));
    try {
      const file = join(dir, 'notes.jsonl');
      // About 19 MB (worker threads scan 4 MB ranges from 16 MB up), a row that cannot be read in the middle.
      const rows = Array.from({ length: 220_000 }, (_, i) =>
        i === 150_000
          ? '{"note": "cut'
          : JSON.stringify({ id: i, note: `Call 555-${String(100 + (i % 900))}-4567 today, Dr. Emily Chen.` }),
      );
      writeFileSync(file, `${rows.join('\n')}\n`);
      const scan = (threads: string) =>
        spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'phi', 'scan', file, '--json', '--threads', threads], {
          encoding: 'utf8',
          maxBuffer: 1 << 27,
        });
      const one = scan('1');
      const two = scan('2');
      assert.equal(two.status, 1);
      assert.equal(two.stderr, one.stderr);
      assert.match(two.stderr, /"unreadable":"line 150001[ :]/);
      assert.ok(two.stdout === one.stdout, 'the same findings, in the same order, with the same lines');
      assert.equal(two.stdout.split('\n').length, 2 * 219_999 + 1);
      const r = throughHead(['phi', 'scan', file, '--json', '--threads', '2']);
      assert.doesNotMatch(r.stderr, /EPIPE|Error/);
      assert.deepEqual(
        r.lines.map((l) => (JSON.parse(l) as { line: number }).line),
        [1, 1],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
