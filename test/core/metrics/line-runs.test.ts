import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricLogParser } from '../../../src/core/metrics/metric-log-parser';
import { denseStepLine, pyRepr, seeded } from './verl-log-generator';
import { assertSameSeries } from './same-series';

/*
 * A log that has shown only verl console step lines is read in runs of lines through the WebAssembly scanner
 * (scan-parts.ts's readRun, MetricLogParser.feedRun). Whatever a log holds, that must give exactly what feeding each
 * line holding a marker to feedBytes gives, which is how the follower read every log before: the same steps, values,
 * problems (with their offsets) and None notes.
 */
const host = new LocalHost();

/** The parse line by line: each line that holds one of the markers the parser asks for at that point, to feedBytes. */
function lineByLine(bytes: Buffer): MetricLogParser {
  const parser = new MetricLogParser();
  for (let at = 0; at < bytes.length;) {
    let nl = bytes.indexOf(0x0a, at);
    const complete = nl >= 0;
    if (!complete) nl = bytes.length;
    let from = at;
    // A byte order mark is no part of the first line (the line reader leaves it out).
    if (at === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) from = 3;
    const to = complete && nl > from && bytes[nl - 1] === 0x0d ? nl - 1 : nl;
    const line = bytes.subarray(from, to);
    if (parser.markers().some((m) => line.includes(m))) {
      if (!complete)
        parser.problems.push({
          offset: at,
          message: 'the last line has no newline (the log was cut, or is still being written): its last value may be cut short',
        });
      parser.feedBytes({ buf: bytes, from, to, start: at });
    }
    at = nl + 1;
  }
  parser.flush();
  return parser;
}

function assertSameParse(got: MetricLogParser, want: MetricLogParser): void {
  assertSameSeries(got.series, want.series);
  assert.deepEqual(got.problems, want.problems);
  assert.equal(got.droppedProblems, want.droppedProblems);
  assert.deepEqual(got.missing.toJSON(), want.missing.toJSON());
  assert.equal(got.framework, want.framework);
}

/** Lines of every kind a verl log (and a log that is not one) may hold, around a run of step lines with the same keys. */
const KEYS = ['actor/pg_loss', 'critic/score/mean', 'timing_s/gen', 'response_length/mean', 'x'.repeat(300)];
const value = fc.oneof(
  { weight: 6, arbitrary: fc.double({ noNaN: true }).map(pyRepr) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => `np.float64(${pyRepr(x)})`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('nan', 'None', 'inf', '1e', 'np.float64(nan)', 'np.int64(3)', 'np.float64(0.5', 'np.x', '0.1x', ''),
  },
);
const prefix = fc.constantFrom(
  '',
  '',
  '(TaskRunner pid=12) ',
  '\u001b[36m(TaskRunner pid=3, ip=10.0.0.1)\u001b[0m ',
  '  (TaskRunner pid=1) ',
  '(NoPid) ',
  'global_',
  '"quoted" ',
  '\u001b[1m',
);
/** Step lines as verl writes them: the same keys line after line (first or after a prefix), values of every kind. */
const stepLines = fc
  .tuple(prefix, fc.nat(2000), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 6 }))
  .chain(([p, step, keys, n]) =>
    fc
      .array(fc.array(value, { minLength: keys, maxLength: keys }), { minLength: n, maxLength: n })
      .map((rows) => rows.map((vs, r) => `${p}step:${step + r}${vs.map((v, i) => ` - ${KEYS[i] ?? `k/${i}`}:${v}`).join('')}`)),
  );
const oddLine = fc.constantFrom(
  'WARNING: a warning between steps',
  '(raylet) a line of Ray output',
  'step: 7 - a:1',
  'step:x - a:1',
  'step:12',
  'step:5 - a:1 - ',
  'step:5 -   :4 - a:2',
  'step:6 - a:1\r - b:2',
  'step:7 - a:\u001b[31m1\u001b[0m',
  'step:8 - odd key:1 - quote"key:2',
  'step:9 - colons:in:key:5',
  ' 10%|█         | 10/100 [00:01<00:09,  9.00it/s]',
  '',
  'global_step:4 - a:1',
  'junk\rstep:7 - actor/pg_loss:1',
  'junk\rstep:7 - q:1',
  'step:8 - q:5',
);
/** A JSONL record or a TRL dict: either turns the rest of the log to line by line. */
const otherFormat = fc.constantFrom('{"step": 3, "data": {"a": 1}}', "{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}");
const lines = fc.oneof(
  { weight: 1, arbitrary: otherFormat.map((l) => [l]) },
  { weight: 40, arbitrary: stepLines },
  { weight: 8, arbitrary: oddLine.map((l) => [l]) },
);

describe('reading a verl log in runs of lines (the WebAssembly scanner) against line by line', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'medrl-runs-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function followed(bytes: Buffer, opts: { maxBytes?: number } = {}): Promise<MetricLogParser> {
    const path = join(dir, 'output.log');
    writeFileSync(path, bytes);
    const f = new MetricsFollower(host, path);
    if (opts.maxBytes !== undefined) {
      // A dashboard's first slices: each poll stops at the first line past maxBytes.
      for (let before = -1; f.readOffset !== before && f.readOffset < bytes.length;) {
        before = f.readOffset;
        const { more } = await f.poll({ maxBytes: opts.maxBytes });
        const at = f.readOffset;
        if (more) assert.ok(at - before >= opts.maxBytes && bytes[at - 1] === 0x0a, `stopped at ${at}, a line's end past the slice`);
        if (more) assert.ok(bytes.lastIndexOf(0x0a, at - 2) + 1 - before < opts.maxBytes, `not a line later than needed (${at})`);
      }
    }
    await f.poll({ final: true });
    return f.parser;
  }

  it('gives the same steps, values, problems and None notes over any mix of lines, endings and byte order mark', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(lines, { minLength: 1, maxLength: 30 }).map((ls) => ls.flat()),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (drawn, crlf, bom, lastNewline) => {
          // Now and then a run of verl's own step lines (64 metrics, a Ray prefix) among the lines drawn.
          const rng = seeded(drawn.length);
          const all = drawn.flatMap((l, i) => (i % 7 ? [l] : [l, ...Array.from({ length: 3 }, (_, k) => denseStepLine(i * 10 + k, rng))]));
          const text = all.join(crlf ? '\r\n' : '\n') + (lastNewline ? '\n' : '');
          const bytes = Buffer.concat([Buffer.from(bom ? '\ufeff' : ''), Buffer.from(text)]);
          assertSameParse(await followed(bytes), lineByLine(bytes));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the same when a line read as text in between leaves other keys in the scanner (a CR before a step line)', async () => {
    // `junk\rstep:7 - q:1` is read as TRL-style text, whose own scan of `step:7 - q:1` leaves `q` in the module's keys
    // where the log's scan has `a`: the next `q` line must not go to `a`'s column.
    const lines = ['step:1 - a:1 - b:2', 'step:2 - a:3 - b:4', 'junk\rstep:7 - q:1', 'step:8 - q:5', 'step:9 - q:6', 'step:10 - a:7 - b:8'];
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    const want = lineByLine(bytes);
    assert.deepEqual(want.series.column('q'), [undefined, undefined, 1, 5, 6, undefined]);
    assertSameParse(await followed(bytes), want);
  });

  it('gives the same across reads of 4 MB, windows of the scanner, lines longer than it holds, and slices of a poll', async () => {
    const rng = seeded(5);
    const lines: string[] = [];
    let size = 0;
    for (let s = 1; size < 9.5e6; s++) {
      let l = denseStepLine(s, rng);
      if (s % 50 === 0) lines.push('(TaskRunner pid=1234) WARNING: a warning between steps');
      if (s % 997 === 0) l = l.replace(/actor\/entropy:[^ ]+/, 'actor/entropy:np.float64(0.5)');
      if (s % 1999 === 0) l = l.replace(/actor\/grad_norm:[^ ]+/, 'actor/grad_norm:None');
      if (s === 3000) l = `${l}${' - m/long:1.5'.repeat(100_000)}`; // 1.3 MB: more than the scanner's window
      if (s === 3500) l = l.replace('actor/pg_loss', 'actor/policy_loss'); // a key changes for good
      lines.push(l);
      size += l.length + 1;
    }
    const bytes = Buffer.from(`${lines.join('\n')}\n`);
    const want = lineByLine(bytes);
    assert.ok(want.series.length > 3600, `${want.series.length} steps`);
    assert.ok(want.series.metricNames().includes('m/long'), want.series.metricNames().join());
    assertSameParse(await followed(bytes), want);
    assertSameParse(await followed(bytes, { maxBytes: 3_000_000 }), want);
  });
});
