import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { MetricsFollower } from '../../../src/core/metrics/metrics-follower';
import { MetricLogParser } from '../../../src/core/metrics/metric-log-parser';
import { parseInRanges, rangeBounds } from '../../../src/core/metrics/split-parse';
import { denseStepLine, seeded } from './verl-log-generator';
import { assertSameSeries } from './same-series';

const FIX = join(__dirname, '../../fixtures/metrics');
const host = new LocalHost();

/**
 * A verl console log as a resumed run leaves it: steps 1-3000, then the run resumed from its step-2500 checkpoint logs
 * steps 2500-4500 again with other values (the later ones win), with warnings between, a metric logged as None every
 * 97 steps, an unreadable value every 500, and a validation metric only the resumed run logs.
 */
function resumedLog(): string {
  const rng = seeded(11);
  const lines: string[] = [];
  const step = (s: number, extra = '') => {
    let line = denseStepLine(s, rng) + extra;
    if (s % 97 === 0) line = line.replace(/actor\/grad_norm:[^ ]+/, 'actor/grad_norm:None');
    if (s % 500 === 0) line = line.replace(/actor\/entropy:[^ ]+/, 'actor/entropy:n/a');
    lines.push(line);
    if (s % 50 === 0) lines.push('(TaskRunner pid=1234) WARNING: a warning between steps');
  };
  for (let s = 1; s <= 3000; s++) step(s);
  lines.push('(TaskRunner pid=1234) Resuming from global_step_2500');
  for (let s = 2500; s <= 4500; s++) step(s, s % 250 === 0 ? ` - val-core/medqa/acc/mean@1:${(s / 9000).toFixed(4)}` : '');
  return `${lines.join('\n')}\n`;
}

async function oneThread(path: string): Promise<MetricsFollower> {
  const f = new MetricsFollower(host, path);
  await f.poll({ final: true });
  return f;
}

describe('parseInRanges: one log parsed by byte ranges on worker threads', () => {
  let dir: string;
  let log: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'medrl-split-'));
    log = join(dir, 'output.log');
    writeFileSync(log, resumedLog());
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the series, problems and None notes one thread gives, with a resumed run repeating steps across a range boundary', async () => {
    const size = statSync(log).size;
    const bounds = rangeBounds(log, size, 3);
    assert.equal(bounds.length, 4, 'three ranges');
    const text = readFileSync(log);
    for (const b of bounds.slice(1, -1)) assert.equal(text[b - 1], 0x0a, `range bound ${b} starts a line`);
    const parser = new MetricLogParser();
    const end = await parseInRanges(host, log, size, parser, { workers: 3 });
    assert.ok(end !== undefined && end > bounds[2]!, 'the ranges were parsed and merged (not left to one thread)');
    const want = await oneThread(log);
    assertSameSeries(parser.series, want.series);
    assert.equal(parser.series.length, 4500);
    // The resumed run's values won over the first run's at the repeated steps.
    const row = parser.series.indexOf(2700);
    assert.equal(parser.series.existingColumn('critic/score/mean')!.get(row), want.series.existingColumn('critic/score/mean')!.get(row));
    assert.deepEqual(parser.series.metricNames().includes('val-core/medqa/acc/mean@1'), true);
    assert.deepEqual(parser.problems, want.parser.problems);
    assert.ok(parser.problems.length >= 10, 'unreadable values reported');
    assert.deepEqual(parser.missing.notes(), want.notes());
    assert.equal(parser.framework, 'verl');
    assert.deepEqual(parser.markers(), ['step:'], 'the merged parser scans for verl lines only from here on');
  });

  it('through a follower: reads on after the ranges (a last line without a newline once only), as one thread would', async () => {
    const cut = join(dir, 'cut.log');
    writeFileSync(cut, `${resumedLog()}(TaskRunner pid=1234) step:4501 - critic/score/mean:0.5 - actor/entropy:0.4`);
    const split = new MetricsFollower(host, cut, undefined, undefined, { split: { workers: 3, minBytes: 0 } });
    await split.poll({ final: true });
    const want = await oneThread(cut);
    assertSameSeries(split.series, want.series);
    assert.equal(split.series.existingColumn('actor/entropy')!.get(split.series.indexOf(4501)), 0.4);
    const problems = await split.problems();
    assert.deepEqual(problems, await want.problems());
    assert.equal(problems.filter((p) => p.message.startsWith('the last line has no newline')).length, 1);
  });

  it('leaves TRL output to one thread (a dict takes its step from the bar drawn after it, maybe in the next range)', async () => {
    const trl = join(dir, 'trl.log');
    const one = readFileSync(join(FIX, 'trl-grpo-transformers5.log'));
    writeFileSync(trl, Buffer.concat([one, one, one]));
    const parser = new MetricLogParser();
    assert.equal(await parseInRanges(host, trl, statSync(trl).size, parser, { workers: 3 }), undefined);
    assert.equal(parser.series.length, 0, 'nothing merged');
    const split = new MetricsFollower(host, trl, undefined, undefined, { split: { workers: 3, minBytes: 0 } });
    await split.poll({ final: true });
    assertSameSeries(split.series, (await oneThread(trl)).series);
  });

  it('leaves a log to one thread when a step line torn by other output ends a range (its rest starts the next)', async () => {
    const torn = join(dir, 'torn.log');
    const rng = seeded(3);
    const head: string[] = [];
    for (let s = 1; s <= 200; s++) head.push(denseStepLine(s, rng));
    // The torn line ends the first half exactly: the bound of two ranges falls just past its newline.
    const firstHalf = `${head.join('\n')}\n(TaskRunner pid=1234) step:201 - actor/entropy:0.5 - actor/pg_loss:-0.00/usr/lib/python3.\n`;
    const rest = `83 - critic/score/mean:0.8 - actor/grad_norm:0.25 - timing_s/step:5.1\n`;
    let tail = '';
    for (let s = 202; ; s++) {
      const line = `${denseStepLine(s, rng)}\n`;
      if (rest.length + tail.length + line.length >= firstHalf.length) break;
      tail += line;
    }
    const secondHalf = `${rest}${tail}`.padEnd(firstHalf.length - 1, ' ') + '\n';
    writeFileSync(torn, firstHalf + secondHalf);
    const size = statSync(torn).size;
    assert.deepEqual(rangeBounds(torn, size, 2), [0, firstHalf.length, size]);
    const parser = new MetricLogParser();
    assert.equal(await parseInRanges(host, torn, size, parser, { workers: 2 }), undefined);
    const split = new MetricsFollower(host, torn, undefined, undefined, { split: { workers: 2, minBytes: 0 } });
    await split.poll({ final: true });
    const want = await oneThread(torn);
    assertSameSeries(split.series, want.series);
    assert.equal(split.series.existingColumn('critic/score/mean')!.get(split.series.indexOf(201)), 0.8, 'the torn step kept its rest');
  });

  it('stops its workers when the signal aborts, and leaves nothing half-merged', async () => {
    const parser = new MetricLogParser();
    const stop = new AbortController();
    const parse = parseInRanges(host, log, statSync(log).size, parser, { workers: 3, signal: stop.signal });
    setTimeout(() => stop.abort(new Error('the dashboard was closed')), 50);
    await assert.rejects(parse, /the dashboard was closed/);
    assert.equal(parser.series.length, 0);
    assert.deepEqual(parser.problems, []);
  });

  it('splits at line starts only: a log of one long line is one range', async () => {
    const long = join(dir, 'long.log');
    writeFileSync(long, 'x'.repeat(300_000));
    assert.deepEqual(rangeBounds(long, 300_000, 4), [0, 300_000]);
  });
});
