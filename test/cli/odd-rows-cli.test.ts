import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';
import { readSamples } from '../../src/core/reward/sample-source';
import { LocalHost } from '../../src/core/remote/local-host';

/*
 * Issue 47, items 3, 5 and 6, as a user meets them: one row nested 6,000 deep, verl's `"score": NaN`, and a broken line
 * holding a patient's name, through every JSONL reader of the CLI.
 */
const PHONE = '555-123-4567';
const NAME = 'Johanna Smithfield';
const DEEP = '{"a":'.repeat(6000) + '1' + '}'.repeat(6000);
/** The lines `phi scan --json` reported findings on. */
const scannedLines = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { line: number }).line);
const dump = (output: string, score: string) =>
  `{"input": "Q: call ${PHONE}", "output": "${output}", "gts": "yes", "score": ${score}, "step": 1}`;

describe('odd rows through the CLI readers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-cli-odd-rows-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'deep/rollouts'), { recursive: true });
  mkdirSync(join(dir, 'nan/rollouts'), { recursive: true });
  mkdirSync(join(dir, 'name/rollouts'), { recursive: true });
  writeFileSync(join(dir, 'deep/rollouts/1.jsonl'), [dump('yes', '1'), DEEP, dump('no', '0')].join('\n') + '\n');
  writeFileSync(
    join(dir, 'nan/rollouts/1.jsonl'),
    [dump('yes', 'NaN'), dump('no', 'Infinity'), dump('maybe', '-Infinity')].join('\n') + '\n',
  );
  writeFileSync(join(dir, 'name/rollouts/1.jsonl'), [dump('yes', '1'), `{"input": Patient ${NAME}, "output": "x"}`].join('\n') + '\n');

  it('a row nested 6,000 deep is one bad row with its line: the rows around it are scanned and printed', async () => {
    const scan = await run(['phi', 'scan', 'deep/rollouts/1.jsonl', '--json'], dir);
    assert.equal(scan.code, 1);
    assert.deepEqual(scannedLines(scan.out), [1, 3], 'the rows before and after the deep one are scanned');
    assert.match(scan.err, /line 2 \(byte offset \d+\): nested more than 512 levels deep/);
    assert.doesNotMatch(scan.err, /Maximum call stack/);

    const episodes = await run(['episodes', 'deep/rollouts/1.jsonl', '--json'], dir);
    assert.equal(episodes.code, 1);
    assert.equal(episodes.out.trim().split('\n').length, 2, 'both readable episodes are printed');
    assert.match(episodes.err, /1\.jsonl:2: malformed: nested more than 512 levels deep/);

    const inspect = await run(['dataset', 'inspect', 'deep/rollouts/1.jsonl'], dir);
    assert.match(inspect.out, /1\.jsonl:2 \(row 2\): error: line 2 \(byte offset \d+\): nested more than 512 levels deep/);
  });

  it("reads Python's NaN, Infinity and -Infinity in every reader", async () => {
    const episodes = await run(['episodes', 'nan/rollouts/1.jsonl', '--json'], dir);
    assert.equal(episodes.code, 0, episodes.err);
    assert.equal(episodes.out.trim().split('\n').length, 3);
    const scan = await run(['phi', 'scan', 'nan/rollouts/1.jsonl', '--json'], dir);
    assert.deepEqual(scannedLines(scan.out), [1, 2, 3]);
    assert.doesNotMatch(scan.err, /could not be read/);
    const redact = await run(['phi', 'redact', 'nan/rollouts/1.jsonl', '--out', 'nan-redacted.jsonl'], dir);
    assert.equal(redact.code, 0, redact.err);
    const copy = readFileSync(join(dir, 'nan-redacted.jsonl'), 'utf8');
    assert.ok(!copy.includes(PHONE) && copy.includes('"score": NaN') && copy.includes('"score": -Infinity'), copy);
    const inspect = await run(['dataset', 'inspect', 'nan/rollouts/1.jsonl'], dir);
    assert.match(inspect.out, /rows {5}3 \(3 fine, 0 with problems\)/);
  });

  it('a JSON document: NaN is a number, and a deep row is one bad row at its line', async () => {
    writeFileSync(join(dir, 'rows.json'), `[\n${dump('yes', 'NaN')},\n${DEEP},\n${dump('no', '1')}\n]\n`);
    const inspect = await run(['dataset', 'inspect', 'rows.json'], dir);
    assert.match(inspect.out, /rows {5}3 \(2 fine, 1 with problems\)/, inspect.out + inspect.err);
    assert.match(inspect.out, /rows\.json:3 \(row 2\): error: line 3: row 1: nested more than 512 levels deep/);
    const scan = await run(['phi', 'scan', 'rows.json', '--json'], dir);
    assert.deepEqual(scannedLines(scan.out), [2, 4]);
  });

  it("a reward samples file: NaN lines are samples, and a sample keeps its row's index after a skipped line", async () => {
    const file = join(dir, 'samples.jsonl');
    writeFileSync(file, [dump('yes', 'NaN'), '{"broken": ', '', dump('no', '1')].join('\n') + '\n');
    const rows = [];
    for await (const r of readSamples(new LocalHost(), file))
      rows.push('problem' in r ? r.problem.line : [r.index, r.row, r.sample.trainingScore]);
    assert.deepEqual(rows, [[0, 1, NaN], 2, [2, 4, 1]]);
  });

  it('an error about a broken line gives file, line and what is wrong, never the text around it', async () => {
    const episodes = await run(['episodes', 'name/rollouts/1.jsonl'], dir);
    assert.match(episodes.err, /1\.jsonl:2: malformed: malformed JSON/);
    const inspect = await run(['dataset', 'inspect', 'name/rollouts/1.jsonl'], dir);
    const scan = await run(['phi', 'scan', 'name/rollouts/1.jsonl'], dir);
    for (const text of [episodes.err, inspect.out, inspect.err, scan.err])
      for (const word of NAME.split(' ')) assert.ok(!text.includes(word), text);
  });
});
