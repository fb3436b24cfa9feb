import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import type { ExecOptions, ExecResult } from '../../../src/core/remote/host';
import { download } from '../../../src/core/checkpoints/download';

const ROOT = join(__dirname, '../../..');
const CLI = join(ROOT, 'dist/cli.js');

/** The built CLI in its own process, as a user runs it. */
function medrl(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const dir = () => mkdtempSync(join(tmpdir(), 'odd-input-'));
const verlRow = (q: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    data_source: 'pubmedqa',
    prompt: [{ role: 'user', content: q }],
    reward_model: { style: 'rule', ground_truth: 'yes' },
    ...extra,
  });

describe('wrong answers on odd input (the built CLI)', () => {
  it('a JSONL file with a UTF-8 byte order mark keeps its first row', async () => {
    const d = dir();
    writeFileSync(
      join(d, 'train.jsonl'),
      `\uFEFF${verlRow('Is aspirin an NSAID?')}\n${verlRow('Is ibuprofen an opioid?')}\n${verlRow('Is fever a symptom?')}\n`,
    );
    const r = await medrl(d, 'dataset', 'inspect', 'train.jsonl', '--json');
    const s = JSON.parse(r.stdout) as { rows: number; rowsOk: number; kind: string; problems: unknown[] };
    console.log(`[odd-input] BOM JSONL: ${s.rowsOk} of ${s.rows} rows read, ${s.problems.length} problem(s)`);
    assert.deepEqual(
      { rows: s.rows, rowsOk: s.rowsOk, kind: s.kind, problems: s.problems },
      { rows: 3, rowsOk: 3, kind: 'verl-rl', problems: [] },
    );
    assert.equal(r.code, 0, r.stderr);
    // The same file as JSON (one array) with a BOM is read too.
    writeFileSync(join(d, 'train.json'), `\uFEFF[${verlRow('a')},\n${verlRow('b')}]`);
    const j = JSON.parse((await medrl(d, 'dataset', 'inspect', 'train.json', '--json')).stdout) as { rowsOk: number };
    assert.equal(j.rowsOk, 2);
  });

  it('CSV: a row after a quoted CRLF (a clinical note from Windows) is reported at its real line, row and line counted from 1', async () => {
    const d = dir();
    // line 1 header; lines 2-3 one row whose note holds a CRLF; line 4 a row; line 5 a row with one field too many.
    writeFileSync(
      join(d, 'notes.csv'),
      'id,prompt,answer\n1,"Patient notes:\r\nfever 38.9 C",yes\n2,"cough",no\n3,"rash",no,EXTRA\n4,"last",yes\n',
    );
    const r = await medrl(d, 'dataset', 'inspect', 'notes.csv');
    const line = r.stdout.split('\n').find((l) => l.includes('Invalid Record Length'));
    console.log(`[odd-input] CSV after a quoted CRLF: ${line}`);
    assert.match(line ?? '', /notes\.csv:5 \(row 3\): error: line 5: Invalid Record Length: columns length is 3, got 4$/);
  });

  it('zod\'s words are plain: "missing: expected text", "must be one of ...", with the row and line counted from 1', async () => {
    const d = dir();
    const bad = JSON.parse(verlRow('q3')) as { prompt: { role: string }[] };
    bad.prompt[0]!.role = 'robot';
    const { data_source: _, ...noSource } = JSON.parse(verlRow('q2')) as Record<string, unknown>;
    writeFileSync(join(d, 'rl.jsonl'), `${verlRow('q1')}\n${JSON.stringify(noSource)}\n${JSON.stringify(bad)}\n`);
    const r = await medrl(d, 'dataset', 'inspect', 'rl.jsonl');
    const problems = r.stdout.split('\n').filter((l) => l.includes(': error: '));
    console.log(`[odd-input] schema problems:\n  ${problems.join('\n  ')}`);
    assert.equal(r.code, 1);
    assert.ok(
      problems.some((l) => /rl\.jsonl:2 \(row 2, data_source\): error: missing: expected text$/.test(l)),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((l) =>
        /rl\.jsonl:3 \(row 3, prompt\[0\]\.role\): error: must be one of system, user, assistant, tool \(got "robot"\)$/.test(l),
      ),
      problems.join('\n'),
    );
    assert.doesNotMatch(r.stdout, /nonoptional|received|Invalid input/);
  });

  it("medrl episodes shows model output's escape codes and never lets them reach the terminal", async () => {
    const d = dir();
    mkdirSync(join(d, 'run', 'rollouts'), { recursive: true });
    // A window title (OSC), clear screen, a colour, and a carriage return that would overwrite the line.
    const output = 'yes \u001b]0;owned\u0007\u001b[2J\u001b[31mred\rforged';
    writeFileSync(
      join(d, 'run', 'rollouts', '1.jsonl'),
      `${JSON.stringify({ input: '<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n', output, score: 1.0, step: 1 })}\n`,
    );
    const r = await medrl(d, 'episodes', 'run');
    assert.equal(r.code, 0, r.stderr);
    const controls = (r.stdout.match(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g) ?? []).length;
    console.log(`[odd-input] episodes: ${controls} control character(s) printed raw`);
    assert.equal(controls, 0);
    assert.ok(r.stdout.includes('yes \\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\rforged'), r.stdout);
    // --json keeps the text exactly (JSON escapes it).
    const j = JSON.parse((await medrl(d, 'episodes', 'run', '--json')).stdout.trim()) as { turns: { content: string }[] };
    assert.equal(j.turns.at(-1)!.content, output);
  });

  it('grad_norm: None (a TRL dict, verl JSONL null, trainer_state null) is reported once with its count and steps, not dropped silently', async () => {
    const d = dir();
    // A dict as the issue's report saw it: a value that is Python's None, printed by repr (transformers' log dict).
    const log = readFileSync(join(ROOT, 'test/fixtures/metrics/trl-grpo-transformers4.log'), 'utf8').replaceAll(
      "'grad_norm': 0.5",
      "'grad_norm': None",
    );
    writeFileSync(join(d, 'output.log'), log);
    const r = await medrl(d, 'metrics', 'output.log');
    console.log(`[odd-input] metrics: ${r.stderr.trim()}`);
    assert.equal(r.code, 0, 'a None value is a note, not an unreadable line');
    assert.match(r.stderr, /output\.log: note: grad_norm: 4 values were None \(steps 5, 10, 15, 20\); not plotted/);
    assert.match(r.stdout, /4 step\(s\)/);
    // verl's file logger (json.dumps: None is null) and a trainer_state.json say the same.
    writeFileSync(
      join(d, 'metrics.jsonl'),
      [1, 2, 3]
        .map((s) => JSON.stringify({ step: s, data: { 'critic/score/mean': 0.5, 'actor/grad_norm': s === 2 ? 1.5 : null } }))
        .join('\n') + '\n',
    );
    const v = await medrl(d, 'metrics', 'metrics.jsonl');
    assert.match(v.stderr, /metrics\.jsonl: note: actor\/grad_norm: 2 values were None \(steps 1, 3\); not plotted/);
    writeFileSync(join(d, 'trainer_state.json'), JSON.stringify({ log_history: [{ step: 10, loss: 0.1, grad_norm: null }] }));
    const t = await medrl(d, 'metrics', 'trainer_state.json');
    assert.match(t.stderr, /trainer_state\.json: note: grad_norm: 1 value was None \(step 10\); not plotted/);
  });

  it('an error never repeats its cause: "(caused by: ...)" only adds what the message lacks', async () => {
    const d = dir();
    writeFileSync(join(d, 'completions_1.parquet'), randomBytes(3000));
    const r = await medrl(d, 'episodes', 'completions_1.parquet');
    console.log(`[odd-input] error: ${r.stderr.trim()}`);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /cannot read the parquet footer at byte offset 2992 of 3000 \(the file is truncated or not parquet\): parquet file invalid/,
    );
    assert.doesNotMatch(r.stderr, /caused by/);
  });
});

describe('a checkpoint download takes its final name only once its checksum matched', () => {
  /** A real local host whose sha256sum answers only when the test lets it: the window in which the file was exposed. */
  class SlowSumHost extends LocalHost {
    constructor(
      private readonly gate: Promise<void>,
      private readonly lie = false,
    ) {
      super();
    }
    override async exec(command: string, opts?: ExecOptions): Promise<ExecResult> {
      if (!command.includes('sha256sum')) return super.exec(command, opts);
      await this.gate;
      const r = await super.exec(command, opts);
      return this.lie ? { ...r, stdout: r.stdout.replace(/^[0-9a-f]{64}/gm, '0'.repeat(64)) } : r;
    }
  }

  it('while the host computes sha256sum the file is only <name>.partial; a match renames it; a mismatch leaves nothing', async () => {
    const src = join(dir(), 'model.safetensors');
    writeFileSync(src, randomBytes(300_000));
    let open!: () => void;
    const dest = join(dir(), 'model.safetensors');
    const done = download(new SlowSumHost(new Promise<void>((r) => (open = r))), src, dest);
    // Wait for every byte to be on disk, sha256sum still held back.
    for (let i = 0; i < 400 && !(existsSync(`${dest}.partial`) && readFileSync(`${dest}.partial`).length === 300_000); i++)
      await new Promise((r) => setTimeout(r, 25));
    const exposed = existsSync(dest);
    console.log(`[odd-input] download: final name before the checksum matched: ${exposed}`);
    assert.equal(exposed, false);
    open();
    await done;
    assert.ok(readFileSync(dest).equals(readFileSync(src)));
    assert.ok(!existsSync(`${dest}.partial`));

    const dest2 = join(dir(), 'model.safetensors');
    await assert.rejects(download(new SlowSumHost(Promise.resolve(), true), src, dest2), /checksum mismatch .*the file was removed/);
    assert.ok(!existsSync(dest2) && !existsSync(`${dest2}.partial`), 'no file under the final name, no partial left');
  });
});
