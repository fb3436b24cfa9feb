// Two verl console logs, each figure beside its baselines from the same run:
// - noisy: a generated 1 GB log (Ray prefixes, ANSI colours, NumPy reprs, 60 lines of Ray/vLLM output per step); MB/s
//   of our parser next to `grep -c 'step:'` (the floor: reading the file) and a Python regex loop, with ratios and our
//   peak memory. Targets: within 3x of grep, at least 3x faster than Python, memory under 100 MB.
// - dense (issue 19): one 64-metric step line per step behind `(TaskRunner pid=1234) `, a warning every 50 steps
//   (MEDRL_BENCH_DENSE_MB, default 1024, cached in the system's tmp dir). Each contender is its own process under
//   /usr/bin/time (wall, CPU, peak RSS): `grep -c step:`, bench/verl_metrics_json.py (a Python regex loop writing what
//   --json writes; checked byte for byte against `medrl metrics --json` on a small log first), our parse alone
//   (bench/parse-metrics-log.ts) and `medrl metrics FILE --json` (both bundled with esbuild, as the CLI ships). Targets:
//   parse ≤ 5x grep's time, --json ≥ 20x faster than Python and within 2x of the parse alone.
// MEDRL_BENCH_LOGS=noisy or dense runs one of them. Each contender runs MEDRL_BENCH_ROUNDS times (default 3 noisy, 1
// dense), interleaved so load from other processes hits all alike; medians are printed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeBundles } from './node-bundles';
import { LocalHost } from '../src/core/remote/local-host';
import { MetricsFollower } from '../src/core/metrics/metrics-follower';
import { writeDenseVerlLog, writeVerlLog } from '../test/core/metrics/verl-log-generator';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '..');
const DATA = join(ROOT, 'bench/.data');
const LOG = join(DATA, 'verl-1g.log');

const PYTHON = String.raw`
import re, sys
line_re = re.compile(r'step:(\d+) - (.*)')
kv_re = re.compile(r'([^ :][^:]*?):(np\.float64\(([^)]*)\)|[^ ]+)(?: - |$)')
steps = {}
with open(sys.argv[1], encoding='utf-8', errors='replace') as f:
    for line in f:
        if 'step:' not in line:
            continue
        m = line_re.search(line.rstrip('\n'))
        if not m:
            continue
        d = steps.setdefault(int(m.group(1)), {})
        for k, raw, inner in kv_re.findall(m.group(2)):
            try:
                d[k] = float(inner or raw)
            except ValueError:
                pass
print(len(steps))
`;

/** Runs a command under bash's `time`: its stdout as a number, its wall time and its CPU time (user + system). */
function timedCommand(cmd: string, args: string[]): { ms: number; cpuMs: number; value: number } {
  const t = performance.now();
  const r = spawnSync('bash', ['-c', 'TIMEFORMAT="%3U %3S"; time "$@"', 'bash', cmd, ...args], { encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const [user, sys] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { ms, cpuMs: (user! + sys!) * 1000, value: Number(r.stdout.trim()) };
}

async function noisy(): Promise<void> {
  mkdirSync(DATA, { recursive: true });
  if (!existsSync(LOG) || statSync(LOG).size < 1 << 30) {
    console.log('generating a 1 GB verl log in bench/.data ...');
    await writeVerlLog(LOG, 1 << 30);
  }
  const size = statSync(LOG).size;
  const mb = size / 1e6;
  // Warm the page cache so every contender reads from memory.
  execFileSync('cat', [LOG], { stdio: ['ignore', 'ignore', 'inherit'] });

  const script = join(DATA, 'parse_verl.py');
  writeFileSync(script, PYTHON);
  const rounds = Number(process.env.MEDRL_BENCH_ROUNDS ?? 3);
  // Wall and CPU time of each round. CPU time is the steadier figure on a shared machine: other processes' load
  // stretches wall time, not the work done.
  const grepMs: number[] = [];
  const oursMs: number[] = [];
  const pyMs: number[] = [];
  const grepCpu: number[] = [];
  const oursCpu: number[] = [];
  const pyCpu: number[] = [];
  let peakGrowth = 0;
  let peakRss = 0;
  let metrics = 0;
  let steps = 0;
  for (let r = 0; r < rounds; r++) {
    const grep = timedCommand('grep', ['-c', 'step:', LOG]);
    grepMs.push(grep.ms);
    grepCpu.push(grep.cpuMs);

    const { rss: rss0 } = process.memoryUsage();
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const t = performance.now();
    const cpu0 = process.cpuUsage();
    const f = new MetricsFollower(new LocalHost(), LOG);
    await f.poll();
    oursMs.push(performance.now() - t);
    const cpu = process.cpuUsage(cpu0);
    oursCpu.push((cpu.user + cpu.system) / 1000);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    peakGrowth = Math.max(peakGrowth, peak - rss0);
    peakRss = Math.max(peakRss, peak);
    metrics = f.series.metricNames().length;

    const py = timedCommand('python3', [script, LOG]);
    pyMs.push(py.ms);
    pyCpu.push(py.cpuMs);
    if (f.series.length !== grep.value || py.value !== grep.value)
      throw new Error(`step counts differ: ours ${f.series.length}, grep ${grep.value}, python ${py.value}`);
    steps = grep.value;
  }
  const grepMed = median(grepMs);
  const oursMed = median(oursMs);
  const pyMed = median(pyMs);
  const rate = (ms: number) => mb / (ms / 1000);
  const all = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`1 GB verl log (${mb.toFixed(0)} MB, ${steps} steps × ${metrics} metrics), median of ${rounds} rounds`);
  console.log(`  grep -c 'step:'   ${rate(grepMed).toFixed(0).padStart(6)} MB/s  (${grepMed.toFixed(0)} ms; rounds ${all(grepMs)})`);
  console.log(
    `  medrl parser      ${rate(oursMed).toFixed(0).padStart(6)} MB/s  (${oursMed.toFixed(0)} ms; rounds ${all(oursMs)})  ${(oursMed / grepMed).toFixed(2)}x grep's time (target ≤ 3x)`,
  );
  console.log(
    `  python3 regex     ${rate(pyMed).toFixed(0).padStart(6)} MB/s  (${pyMed.toFixed(0)} ms; rounds ${all(pyMs)})  ours is ${(pyMed / oursMed).toFixed(2)}x faster (target ≥ 3x)`,
  );
  const [gc, oc, pc] = [median(grepCpu), median(oursCpu), median(pyCpu)];
  console.log(
    `  CPU time (user + system, all threads): grep ${gc.toFixed(0)} ms, ours ${oc.toFixed(0)} ms (${(oc / gc).toFixed(2)}x grep's), python ${pc.toFixed(0)} ms (ours ${(pc / oc).toFixed(2)}x less)`,
  );
  console.log(
    `  peak memory: RSS ${(peakRss / 1e6).toFixed(0)} MB, largest growth while parsing ${(peakGrowth / 1e6).toFixed(0)} MB (target < 100 MB)`,
  );
}

/** One process under /usr/bin/time: wall and CPU seconds, peak RSS (MB) and its stdout (unless `toNull`). */
function timedProcess(cmd: string[], toNull = false): { wall: number; cpu: number; rssMb: number; out: string } {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', ...cmd], {
    encoding: 'utf8',
    stdio: ['ignore', toNull ? 'ignore' : 'pipe', 'pipe'],
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [wall, user, sys, kb] = r.stderr.trim().split('\n').at(-1)!.split(' ').slice(1).map(Number);
  return { wall: wall!, cpu: user! + sys!, rssMb: (kb! * 1024) / 1e6, out: r.stdout ?? '' };
}

type Contender = 'grep' | 'parse1' | 'parse' | 'json' | 'python';

async function dense(): Promise<void> {
  const mbWanted = Number(process.env.MEDRL_BENCH_DENSE_MB ?? 1024);
  const dir = join(tmpdir(), 'medrl-bench');
  mkdirSync(dir, { recursive: true });
  const log = join(dir, `verl-dense-${mbWanted}m.log`);
  if (!existsSync(log) || statSync(log).size < mbWanted * (1 << 20)) {
    console.log(`generating a ${mbWanted} MB dense verl log in ${dir} ...`);
    await writeDenseVerlLog(log, mbWanted * (1 << 20));
  }
  const bin = nodeBundles(
    {
      'medrl-cli': join(ROOT, 'src/cli/main.ts'),
      'json-worker': join(ROOT, 'src/core/metrics/series-json-worker.ts'),
      'range-parse-worker': join(ROOT, 'src/core/metrics/range-parse-worker.ts'),
      'parse-metrics-log': join(ROOT, 'bench/parse-metrics-log.ts'),
    },
    join(dir, 'bin'),
  );
  const py = join(ROOT, 'bench/verl_metrics_json.py');
  const cli = (file: string) => [process.execPath, join(bin, 'medrl-cli.js'), 'metrics', file, '--json'];
  // The baseline must do the same work: its output is compared byte for byte with ours on a small dense log.
  const small = join(dir, 'verl-dense-check.log');
  await writeDenseVerlLog(small, 4e6);
  const ours = execFileSync(cli(small)[0]!, cli(small).slice(1), { maxBuffer: 64 << 20 });
  const theirs = execFileSync('python3', [py, small], { maxBuffer: 64 << 20 });
  if (!ours.equals(theirs)) throw new Error(`${py} and medrl metrics --json disagree on ${small}`);

  execFileSync('cat', [log], { stdio: ['ignore', 'ignore', 'inherit'] });
  const rounds = Number(process.env.MEDRL_BENCH_ROUNDS ?? 1);
  const runs: Record<Contender, { wall: number; cpu: number; rssMb: number }[]> = {
    grep: [],
    parse1: [],
    parse: [],
    json: [],
    python: [],
  };
  let steps = 0;
  for (let r = 0; r < rounds; r++) {
    const grep = timedProcess(['grep', '-c', 'step:', log]);
    const parse = timedProcess([process.execPath, join(bin, 'parse-metrics-log.js'), log]);
    if (Number(parse.out) !== Number(grep.out)) throw new Error(`step counts differ: ours ${parse.out.trim()}, grep ${grep.out.trim()}`);
    steps = Number(grep.out);
    runs.grep.push(grep);
    runs.parse.push(parse);
    runs.parse1.push(timedProcess([process.execPath, join(bin, 'parse-metrics-log.js'), log, '--one-thread']));
    runs.json.push(timedProcess(cli(log), true));
    runs.python.push(timedProcess(['python3', py, log], true));
  }
  const med = (k: Contender, f: 'wall' | 'cpu' | 'rssMb') => median(runs[k].map((x) => x[f]));
  const mb = statSync(log).size / 1e6;
  const metrics = readFileSync(small, 'utf8').split('\n')[0]!.split(' - ').length - 1;
  console.log(
    `dense verl log (${mb.toFixed(0)} MB, ${steps} steps × ${metrics} metrics), median of ${rounds} round(s); wall s / CPU s (user + system) / peak RSS`,
  );
  const row = (label: string, k: Contender, note: string) =>
    console.log(
      `  ${label.padEnd(30)} ${med(k, 'wall').toFixed(2).padStart(7)} s  ${med(k, 'cpu').toFixed(2).padStart(7)} s CPU  ${med(k, 'rssMb').toFixed(0).padStart(5)} MB  ${note}`,
    );
  const x = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}x` : 'n/a');
  row(`grep -c step:`, 'grep', '');
  row(`python3 regex loop → JSON`, 'python', '');
  row(`medrl parse on one thread`, 'parse1', `${x(med('parse1', 'wall'), med('grep', 'wall'))} grep's time`);
  row(
    `medrl parse alone`,
    'parse',
    `${x(med('parse', 'wall'), med('grep', 'wall'))} grep's time, CPU ${x(med('parse', 'cpu'), med('grep', 'cpu'))} (target ≤ 5x); ${x(med('parse1', 'wall'), med('parse', 'wall'))} faster than one thread`,
  );
  row(
    `medrl metrics --json`,
    'json',
    `${x(med('python', 'wall'), med('json', 'wall'))} faster than Python, CPU ${x(med('python', 'cpu'), med('json', 'cpu'))} (target ≥ 20x); ${x(med('json', 'wall'), med('parse', 'wall'))} the parse's time, CPU ${x(med('json', 'cpu'), med('parse', 'cpu'))} (target ≤ 2x)`,
  );
}

async function main(): Promise<void> {
  const logs = (process.env.MEDRL_BENCH_LOGS ?? 'noisy,dense').split(',');
  if (logs.includes('noisy')) await noisy();
  if (logs.includes('dense')) await dense();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
