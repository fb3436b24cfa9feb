// Issue 47 item 7: a log's cost per metric name and per line. Each contender is its own process (the parse bundled as the
// CLI ships it, bench/parse-metrics-log.ts, split over worker threads as `medrl metrics` reads a big log) under
// /usr/bin/time, each figure beside its baseline from the same run:
// - many names: 30,000 names × 100 steps (verl's per-data-source metrics) against the same 3,000,000 values under 64
//   names (46,875 steps). Targets: under 200 MB peak and 5 s. Before: 30,000 names × 3 steps took 128 s and 2.16 GB.
// - a huge line: a TRL dict line holding a 100 MB string value against a log of one short line (the process alone);
//   the peak's growth over that as a multiple of the line. Target: a small multiple. Before: 3.9 GB (about 40x).
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeBundles } from './node-bundles';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '..');
const DIR = join(tmpdir(), 'medrl-bench');

/** A verl console log of `names` metrics at each of `steps` steps. */
async function writeNamesLog(file: string, names: number, steps: number): Promise<void> {
  const out = createWriteStream(file);
  for (let step = 1; step <= steps; step++) {
    const parts: string[] = [];
    for (let i = 0; i < names; i++) parts.push(`val-aux/source_${i}/reward/mean@4:${((i * 7 + step) % 1000) / 1000}`);
    if (!out.write(`step:${step} - ${parts.join(' - ')}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.end(() => resolve());
  });
}

/** The parse of `log` in its own process: wall seconds (this process's clock) and peak RSS in MB. */
function parse(bin: string, log: string): { s: number; mb: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'RSS %M', process.execPath, join(bin, 'parse-metrics-log.js'), log], { encoding: 'utf8' });
  const s = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`parse of ${log} failed (${r.status}): ${r.stderr}`);
  const kb = Number(/RSS (\d+)/.exec(r.stderr)![1]);
  return { s, mb: (kb * 1024) / 1e6 };
}

async function main(): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  const bin = nodeBundles(
    {
      'parse-metrics-log': join(ROOT, 'bench/parse-metrics-log.ts'),
      'range-parse-worker': join(ROOT, 'src/core/metrics/range-parse-worker.ts'),
    },
    join(DIR, 'names-bin'),
  );
  const many = join(DIR, 'names-30000x100.log');
  const dense = join(DIR, 'names-64x46875.log');
  if (!existsSync(many)) await writeNamesLog(many, 30_000, 100);
  if (!existsSync(dense)) await writeNamesLog(dense, 64, 46_875);
  const huge = join(DIR, 'trl-100mb-line.log');
  const lineBytes = 100 << 20;
  if (!existsSync(huge)) writeFileSync(huge, `{'loss': 0.5, 'completions': '${'x'.repeat(lineBytes)}', 'epoch': 0.1}\n`);
  const tiny = join(DIR, 'trl-one-line.log');
  writeFileSync(tiny, `{'loss': 0.5, 'epoch': 0.1}\n`);

  const a = parse(bin, many);
  const b = parse(bin, dense);
  console.log('3,000,000 values: 30,000 names × 100 steps | baseline 64 names × 46,875 steps | ratio');
  console.log(`  time  ${a.s.toFixed(2)} s | ${b.s.toFixed(2)} s | ${(a.s / b.s).toFixed(2)}x   (target < 5 s)`);
  console.log(`  peak  ${a.mb.toFixed(0)} MB | ${b.mb.toFixed(0)} MB | ${(a.mb / b.mb).toFixed(2)}x   (target < 200 MB)`);
  const h = parse(bin, huge);
  const t = parse(bin, tiny);
  const growth = h.mb - t.mb;
  console.log('a TRL dict line of 100 MB | baseline: a one-line log | growth / line');
  console.log(
    `  peak  ${h.mb.toFixed(0)} MB | ${t.mb.toFixed(0)} MB | ${(growth / (lineBytes / 1e6)).toFixed(2)}x the line   (before: about 40x)`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
