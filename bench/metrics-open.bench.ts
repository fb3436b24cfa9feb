// Issue 19's comparison opened for the first time, without VS Code: ten runs of 100k steps × 64 metrics (a 211 MB dense
// verl log each, hard links of one file) parsed into a fresh metrics cache on worker threads, as the dashboard does
// (bench/open-runs.ts, bundled with the worker like the extension), until every run's series is loaded. Each count of
// workers at once is printed against two baselines from the same run: one of the logs opened alone, and
// `grep -c step:` over the ten. Target: < 2 s (the E2E test in real code-server adds the webview's own start to it).
// `npm run bench -- metrics-open`; MEDRL_BENCH_OPEN_WORKERS=1,2,default picks the counts (default: 1, 2, 4 and the
// extension's own, `default`: one per core but one, at least 2, at most 4).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeBundles } from './node-bundles';
import { writeDenseVerlSteps } from '../test/core/metrics/verl-log-generator';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '..');
const RUNS = 10;
const STEPS = 100_000;

interface Opened {
  ms: number;
  steps: number[];
  peakMb: number;
}

function open(bin: string, logs: string[], workers?: number): Opened {
  const args = [join(bin, 'open-runs.js'), ...logs, ...(workers === undefined ? [] : ['--workers', String(workers)])];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`open-runs ${args.slice(1).join(' ')} failed (${r.status}): ${r.stderr}`);
  const got = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Opened;
  if (got.steps.some((n) => n !== STEPS)) throw new Error(`a run did not load all ${STEPS} steps: ${got.steps.join(', ')}`);
  return got;
}

async function main(): Promise<void> {
  const dir = join(tmpdir(), 'medrl-bench');
  mkdirSync(dir, { recursive: true });
  const log = join(dir, `verl-dense-${STEPS}-steps.log`);
  if (!existsSync(log)) {
    console.log(`generating a ${STEPS}-step dense verl log in ${dir} ...`);
    await writeDenseVerlSteps(log, STEPS);
  }
  const runs = join(dir, 'ten-runs');
  rmSync(runs, { recursive: true, force: true });
  mkdirSync(runs);
  const logs = Array.from({ length: RUNS }, (_, i) => {
    const p = join(runs, `run-${i}.log`);
    linkSync(log, p);
    return p;
  });
  const bin = nodeBundles(
    { 'open-runs': join(ROOT, 'bench/open-runs.ts'), 'metrics-worker': join(ROOT, 'src/core/metrics/parse-worker.ts') },
    join(dir, 'open-bin'),
  );
  execFileSync('cat', [log], { stdio: ['ignore', 'ignore', 'inherit'] });

  const t = performance.now();
  const counted = execFileSync('grep', ['-c', 'step:', ...logs], { encoding: 'utf8' });
  const grepS = (performance.now() - t) / 1000;
  if (!counted.split('\n').every((l) => l === '' || l.endsWith(`:${STEPS}`))) throw new Error(`grep counted ${counted}`);
  const alone = open(bin, [logs[0]!], 1);
  const counts = process.env.MEDRL_BENCH_OPEN_WORKERS?.split(',').map((w) => (w === 'default' ? undefined : Number(w))) ?? [
    1,
    2,
    4,
    undefined,
  ];
  const mb = (statSync(log).size * RUNS) / 1e6;
  console.log(
    `${RUNS} runs × ${STEPS} steps × 64 metrics, ${mb.toFixed(0)} MB of logs, ${availableParallelism()} cores; wall time until every run is loaded (target < 2 s)`,
  );
  console.log(`  grep -c step: over the ten logs              ${grepS.toFixed(2).padStart(6)} s`);
  console.log(
    `  one log alone, one worker                    ${(alone.ms / 1000).toFixed(2).padStart(6)} s   peak ${alone.peakMb.toFixed(0)} MB`,
  );
  for (const n of counts) {
    const o = open(bin, logs, n);
    const s = o.ms / 1000;
    const label = n === undefined ? 'workers as the extension sets them' : `${n} worker(s) at once`;
    console.log(
      `  ten runs, ${label.padEnd(34)} ${s.toFixed(2).padStart(6)} s   peak ${o.peakMb.toFixed(0).padStart(4)} MB   ${(o.ms / alone.ms).toFixed(1)}x one log alone, ${(s / grepS).toFixed(0)}x grep's time`,
    );
  }
  rmSync(runs, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
