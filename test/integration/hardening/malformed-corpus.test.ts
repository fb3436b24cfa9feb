import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rowsToParquet } from '../../../src/core/datasets/parquet-rows';
import { forgedParquet } from '../../fixtures/forged-parquet';
import { cliPeak } from './cli-peak';

/*
 * Issue 47 (items 2, 3, 5, 6): a corpus of malformed files, each read by every reader of the packaged CLI. Each reader
 * ends with a plain error naming the file, or reports the bad row by its line and goes on, within MAX_PEAK_MB of memory
 * (the CLI's own node process; the reward function's python3 worker is not counted), and never with JavaScript's words.
 */

/**
 * The CLI's peak RSS on any file of the corpus. Its worst is the 50 MB line, which a reader holds as text and parses
 * (episodes, dataset inspect and phi redact 370-390 MB measured on a 2-core machine); the forged parquet files, which
 * took 2.6-4.7 GB before their footers were checked, are refused like any small file.
 */
const MAX_PEAK_MB = 500;
const HUGE_LINE_BYTES = 50 << 20;
const NAME = 'Johanna Smithfield';
/** What a reader said when it failed in JavaScript's words, not its own. */
const RAW =
  /Maximum call stack|Invalid array length|Cannot read properties|outside the bounds|heap out of memory|is not a function|\bat .+\.js:\d+/;

const dumpLine = (output: string, score: string) =>
  `{"input": "Q: is it benign?", "output": "${output}", "gts": "yes", "score": ${score}, "step": 1, "acc": ${score}}`;
const metricsLine = (step: number, score: string) => `{"step": ${step}, "data": {"critic/score/mean": ${score}, "actor/kl_loss": 0.01}}`;

/** The JSONL cases: a dump and a metrics log each, with the odd line between two good ones. */
const JSONL_CASES: Record<string, { dump: string; metrics: string }> = {
  deep: {
    dump: '{"a":'.repeat(6000) + '1' + '}'.repeat(6000),
    metrics: '{"step": 2, "data": ' + '{"a":'.repeat(6000) + '1' + '}'.repeat(6001),
  },
  nan: { dump: dumpLine('yes', 'NaN'), metrics: metricsLine(2, 'NaN') },
  infinity: { dump: `${dumpLine('no', 'Infinity')}\n${dumpLine('no', '-Infinity')}`, metrics: metricsLine(2, '-Infinity') },
  broken: { dump: `{"input": Patient ${NAME}, "output": "x"}`, metrics: `{"step": 2, "data": Patient ${NAME}}` },
  'huge-line': { dump: '', metrics: '' }, // written in blocks below
};

describe('a corpus of malformed files through every reader of the CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-malformed-corpus-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let peaks: Record<string, { mb: number; file: string }> = {};
  /** Prints each reader's peak on its worst file of the test (the figures MAX_PEAK_MB is checked against), and starts anew. */
  function printPeaks(what: string): void {
    const table = Object.entries(peaks).map(([reader, p]) => `  ${reader.padEnd(16)} ${String(p.mb).padStart(4)} MB  (${p.file})`);
    console.log(`peak RSS of the CLI per reader on ${what} (limit ${MAX_PEAK_MB} MB):\n${table.join('\n')}`);
    peaks = {};
  }

  before(() => {
    writeFileSync(
      join(dir, 'score.py'),
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0 if solution_str == ground_truth else 0.0\n',
    );
    const rows = Array.from({ length: 200 }, (_, i) => ({ prompt: `question ${i} `.repeat(8), completion: `answer ${i} `.repeat(8) }));
    const claims = (n: bigint) =>
      forgedParquet(rows, (f) => {
        f.num_rows = n;
        f.row_groups[0]!.num_rows = n;
      });
    const good = Buffer.from(rowsToParquet(rows));
    writeFileSync(join(dir, 'rows-200m.parquet'), claims(200_000_000n));
    writeFileSync(join(dir, 'rows-2e62.parquet'), claims(2n ** 62n));
    writeFileSync(join(dir, 'footer-cut.parquet'), good.subarray(0, good.length - 20));
    writeFileSync(
      join(dir, 'chunk-outside.parquet'),
      forgedParquet(rows, (f) => (f.row_groups[0]!.columns[1]!.meta_data!.data_page_offset = 1n << 40n)),
    );
    for (const [name, c] of Object.entries(JSONL_CASES)) {
      const run = join(dir, 'runs', name);
      mkdirSync(join(run, 'rollouts'), { recursive: true });
      if (name === 'huge-line') {
        writeHugeLine(
          join(run, 'rollouts/1.jsonl'),
          `${dumpLine('yes', '1')}\n{"input": "Q", "output": "`,
          `", "gts": "yes", "score": 1, "step": 1}\n${dumpLine('no', '0')}\n`,
        );
        writeHugeLine(
          join(run, 'metrics.jsonl'),
          `${metricsLine(1, '0.5')}\n{"step": 2, "data": {"note": "`,
          `"}}\n${metricsLine(3, '0.7')}\n`,
        );
      } else {
        writeFileSync(join(run, 'rollouts/1.jsonl'), `${dumpLine('yes', '1')}\n${c.dump}\n${dumpLine('no', '0')}\n`);
        writeFileSync(join(run, 'metrics.jsonl'), `${metricsLine(1, '0.5')}\n${c.metrics}\n${metricsLine(3, '0.7')}\n`);
      }
      copyFileSync(join(run, 'rollouts/1.jsonl'), join(dir, `${name}.jsonl`));
    }
  });

  /** Runs one reader on one file; checks its peak memory and that it failed, if at all, in its own words. */
  async function read(reader: string, args: string[], file: string) {
    const r = await cliPeak(args, dir);
    const said = `${r.stdout.toString('utf8', 0, 4000)}\n${r.stderr}`;
    assert.doesNotMatch(said, RAW, `${reader} on ${file}`);
    assert.ok(!said.includes('Smithfield'), `${reader} on ${file} quotes a row's text: ${said}`);
    assert.ok(r.peakMb <= MAX_PEAK_MB, `${reader} on ${file}: peak RSS ${r.peakMb} MB, more than ${MAX_PEAK_MB} MB`);
    if (!peaks[reader] || peaks[reader]!.mb < r.peakMb) peaks[reader] = { mb: r.peakMb, file };
    return { ...r, said };
  }

  it('forged and damaged parquet files: a plain error naming the file and what is wrong, at once', async () => {
    for (const file of ['rows-200m.parquet', 'rows-2e62.parquet', 'footer-cut.parquet', 'chunk-outside.parquet']) {
      const why = file.startsWith('footer')
        ? /cannot read the parquet footer/
        : /the parquet footer is not believable \((row group 0 claims \d+ rows|row group 0, column completion: bytes)/;
      for (const [reader, args] of [
        ['dataset inspect', ['dataset', 'inspect', file]],
        ['episodes', ['episodes', file]],
        ['reward run', ['reward', 'run', '--fn', 'score.py', '--samples', file]],
        ['phi scan', ['phi', 'scan', file]],
        ['phi redact', ['phi', 'redact', file, '--out', `redacted-${file}`]],
      ] as const) {
        const t0 = Date.now();
        const r = await read(reader, [...args], file);
        assert.equal(r.code, 1, `${reader} on ${file}: ${r.said}`);
        assert.match(r.stderr, new RegExp(`${file.replace('.', '\\.')}: `), `${reader} names the file`);
        assert.match(r.stderr, why, `${reader} on ${file}`);
        assert.ok(Date.now() - t0 < 10_000, `${reader} on ${file} took ${Date.now() - t0} ms`);
      }
    }
    printPeaks('the parquet files');
  });

  it('deep, NaN, Infinity, broken and 50 MB lines: each reader reads the rest and names the bad line', { timeout: 120_000 }, async () => {
    for (const name of Object.keys(JSONL_CASES)) {
      const file = `${name}.jsonl`;
      const run = `runs/${name}`;
      // Which line is bad, if any: Python's numbers are read as numbers; the huge line is read or refused by its size.
      const bad = name === 'deep' || name === 'broken' ? 2 : undefined;
      const lines = name === 'infinity' ? 4 : 3;

      const inspect = await read('dataset inspect', ['dataset', 'inspect', file], file);
      assert.match(inspect.said, new RegExp(`rows {5}${lines} \\(${lines - (bad ? 1 : 0)} fine`), inspect.said);
      if (bad) assert.match(inspect.said, new RegExp(`${file}:${bad} \\(row ${bad}\\): error: line ${bad} `));

      const episodes = await read('episodes', ['episodes', file, '--json'], file);
      assert.equal(episodes.stdout.toString().trim().split('\n').length, lines - (bad ? 1 : 0), `episodes on ${file}: ${episodes.stderr}`);
      assert.equal(episodes.code, bad ? 1 : 0, episodes.said);
      if (bad) assert.match(episodes.stderr, new RegExp(`${file}:${bad}: malformed: `));

      const metrics = await read('metrics', ['metrics', run, '--json'], `${run}/metrics.jsonl`);
      assert.ok(metrics.stdout.toString().includes('"step":3'), `metrics on ${run}: ${metrics.said}`);

      const backtest = await read(
        'reward backtest',
        ['reward', 'backtest', '--run', run, '--fn', 'score.py', '--json'],
        `${run}/rollouts/1.jsonl`,
      );
      if (bad) {
        assert.equal(backtest.code, 1, 'a skipped line never passes silently');
        assert.match(backtest.stderr, new RegExp(`rollouts/1\\.jsonl:${bad}: error: `));
        assert.equal((JSON.parse(backtest.stdout.toString()) as { skipped: number }).skipped, 1);
      } else assert.equal((JSON.parse(backtest.stdout.toString()) as { total: number }).total, lines, backtest.said);

      const reward = await read('reward run', ['reward', 'run', '--fn', 'score.py', '--samples', file, '--json'], file);
      const indices = reward.stdout
        .toString()
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { index: number }).index);
      // A refused line (broken, deep, over 8 MiB) keeps its place: the line after it is still index 2.
      assert.equal(indices.at(-1), lines - 1, `reward run on ${file}: ${reward.said}`);

      const scan = await read('phi scan', ['phi', 'scan', file], file);
      assert.match(scan.stderr, new RegExp(`${lines} row\\(s\\)${bad ? ', 1 could not be read' : ''}`), scan.said);

      const redact = await read('phi redact', ['phi', 'redact', file, '--out', `redacted-${file}`], file);
      assert.equal(redact.code, name === 'broken' ? 1 : 0, redact.said);
      if (name === 'broken') assert.match(redact.stderr, new RegExp(`${file}:2: malformed JSON`));
    }
    printPeaks('the JSONL files');
  });
});

/** A file of `head`, a 50 MB run of text and `tail`, in blocks: the test itself never holds it whole. */
function writeHugeLine(file: string, head: string, tail: string): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, head);
    const block = 'lorem ipsum dolor sit amet '.repeat(40_000);
    for (let n = 0; n < HUGE_LINE_BYTES; n += block.length) writeSync(fd, block);
    writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
}
