// PHI scan speed and memory on a 1 GB JSONL of clinical notes: `medrl phi scan FILE --json` (the bundled CLI, as a user runs
// it) by default (two worker threads), in one thread and on all cores against `wc -l` and a single `grep -cE` for one phone shape on the same file. Rows are the 200 real MEDEC notes (no
// identifiers) with invented identifiers planted in one row in ten (the evaluation corpus's documents), so the scan both
// reads quiet text and reports findings. `npm run bench -- phi`.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../src/core/remote/local-host';
import { openDataset } from '../src/core/datasets/open-dataset';
import { phiCorpus } from '../test/core/phi/phi-corpus';
import { phiWorkerCount } from '../src/core/phi/scan-range';

const root = process.env.MEDRL_ROOT ?? join(__dirname, '..');
const dir = join(__dirname, '.data');
const GB = 1e9;
/** The file's size in GB (MEDRL_PHI_BENCH_GB=0.05 for a quick look; the figures to report are at 1). */
const SIZE = Number(process.env.MEDRL_PHI_BENCH_GB ?? 1) * GB;

async function notes(): Promise<string[]> {
  const reader = await openDataset(new LocalHost(), join(root, 'demo/data/medec/medec-ms-validation-first200.csv'));
  const out: string[] = [];
  for await (const r of reader.rows()) out.push(String((r.value as Record<string, unknown>).Text ?? ''));
  return out;
}

async function generate(file: string): Promise<{ rows: number; planted: number }> {
  const plain = await notes();
  const planted = (await phiCorpus()).map((d) => d.text);
  const fd = openSync(file, 'w');
  let rows = 0;
  let withPhi = 0;
  for (let written = 0; written < SIZE;) {
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++, rows++) {
      const phi = rows % 10 === 0;
      if (phi) withPhi++;
      const note = phi ? planted[rows % planted.length] : plain[rows % plain.length];
      lines.push(JSON.stringify({ id: `note-${rows}`, data_source: 'medec', note }));
    }
    const chunk = Buffer.from(`${lines.join('\n')}\n`);
    writeSync(fd, chunk);
    written += chunk.length;
  }
  closeSync(fd);
  return { rows, planted: withPhi };
}

/**
 * Wall time in seconds and peak resident memory in MB of a command. Its stdout goes to /dev/null or, with `piped`, is read
 * (GNU grep stops at the first match when its output is /dev/null, so a baseline must not write there).
 */
function measure(cmd: string, args: string[], piped = false): { s: number; mb?: number } {
  const timed = existsSync('/usr/bin/time');
  const t = performance.now();
  const r = spawnSync(timed ? '/usr/bin/time' : cmd, timed ? ['-f', '%M', cmd, ...args] : args, {
    stdio: ['ignore', piped ? 'pipe' : 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const s = (performance.now() - t) / 1000;
  if (r.error) throw r.error;
  // 0 and 1 are answers (grep found nothing, the scan found something); anything else is a failure to report.
  if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const kb = timed ? Number(r.stderr.trim().split('\n').pop()) : NaN;
  return { s, mb: Number.isFinite(kb) ? kb / 1024 : undefined };
}

function line(name: string, s: number, size: number, baseName: string, base: number): void {
  const rate = (x: number) => `${(size / 1e6 / x).toFixed(0)} MB/s`;
  console.log(
    `${name.padEnd(44)} ${`${s.toFixed(1)} s`.padStart(8)} ${rate(s).padStart(10)}   ${baseName.padEnd(28)} ${`${base.toFixed(2)} s`.padStart(8)} ${rate(base).padStart(10)}   ratio ${(s / base).toFixed(1)}x`,
  );
}

async function main(): Promise<void> {
  const cli = join(root, 'dist/cli.js');
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'phi-1g.jsonl');
  let t = performance.now();
  const { rows, planted } = await generate(file);
  const size = statSync(file).size;
  console.log(
    `generated ${file}: ${rows} notes (${planted} with planted identifiers), ${(size / GB).toFixed(2)} GB in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  try {
    const wc = measure('wc', ['-l', file], true);
    const grep = measure('grep', ['-cE', '[0-9]{3}-[0-9]{3}-[0-9]{4}', file], true);
    const args = [cli, 'phi', 'scan', file, '--json'];
    // One thread, the default (two worker threads, fewer on a machine with fewer cores), then one worker thread per core
    // (--threads auto), each with its peak memory; MEDRL_PHI_BENCH_THREADS=3,4,8 adds those counts.
    const single = measure(process.execPath, [...args, '--threads', '1']);
    line('medrl phi scan --json --threads 1', single.s, size, 'wc -l', wc.s);
    line('medrl phi scan --json --threads 1', single.s, size, 'grep -cE (one phone shape)', grep.s);
    const peak = (m?: number) => (m === undefined ? 'not measured (no /usr/bin/time)' : `${m.toFixed(0)} MB`);
    console.log(`  peak memory (maxrss of the process): ${peak(single.mb)}`);
    const more = process.env.MEDRL_PHI_BENCH_THREADS?.split(',').map(Number) ?? [];
    // The default first (unless it is one thread, measured above), then the others once each.
    for (const n of [...new Set([phiWorkerCount(), ...more, phiWorkerCount('auto')])].filter((k) => k > 1)) {
      const byDefault = n === phiWorkerCount();
      const scan = measure(process.execPath, byDefault ? args : [...args, '--threads', String(n)]);
      line(`medrl phi scan --json ${byDefault ? `(default: ${n} threads)` : `--threads ${n}`}`, scan.s, size, 'wc -l', wc.s);
      console.log(
        `  peak memory (all threads) ${peak(scan.mb)}; ${(single.s / scan.s).toFixed(2)}x one thread on ${availableParallelism()} cores`,
      );
    }
    console.log('targets: ≥ 100 MB/s and < 200 MB');
    // The scan exits 1 when it finds something (like a linter), so count its lines through a pipe.
    t = performance.now();
    const count = execFileSync('bash', ['-c', '"$0" "$1" phi scan "$2" --json 2>/dev/null | wc -l', process.execPath, cli, file], {
      encoding: 'utf8',
    }).trim();
    console.log(`${count} findings reported (${((performance.now() - t) / 1000).toFixed(1)} s, counted through a pipe)`);
  } finally {
    rmSync(file, { force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
