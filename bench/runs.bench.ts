// Refresh of 200 runs on one host: the runs listing (one round trip for the whole host) against one command per run
// (what a naive refresh does: read each run's files and check its pid separately). Over SSH every command is a network
// round trip, so the real gap is larger than measured here on the local host.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../src/core/remote/local-host';
import { shellQuote } from '../src/core/remote/shell-quote';
import { listRuns, LOG_TAIL_BYTES } from '../src/core/runs/list-runs';

const RUNS = 200;
const dir = join(__dirname, '.data/runs');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const line = (s: number) =>
  `(TaskRunner pid=1, ip=10.0.0.1) step:${s} - actor/pg_loss:-0.01 - critic/score/mean:0.56 - response_length/mean:212.5 - timing_s/step:31.2\n`;
const log = Array.from({ length: 400 }, (_, i) => line(i + 1)).join('');
for (let i = 0; i < RUNS; i++) {
  const id = `bench-run-${String(i).padStart(3, '0')}-20260101-000000-abcdef`;
  const d = join(dir, id);
  mkdirSync(d);
  writeFileSync(
    join(d, 'run.json'),
    JSON.stringify({
      id,
      name: `bench ${i}`,
      kind: 'train',
      framework: 'verl',
      algorithm: 'grpo',
      host: 'local',
      scheduler: 'ssh',
      created: new Date(Date.now() - i * 60_000).toISOString(),
      dir: d,
      pid: process.pid,
      pgid: process.pid,
    }) + '\n',
  );
  writeFileSync(join(d, 'output.log'), log);
  if (i % 4 !== 0) writeFileSync(join(d, 'exit_code'), '0\n');
}

async function oneCommandPerRun(host: LocalHost): Promise<number> {
  const ls = await host.exec(`ls ${shellQuote(dir)}`);
  let n = 0;
  for (const id of ls.stdout.split('\n').filter(Boolean)) {
    const d = join(dir, id);
    const r = await host.exec(
      `cd ${shellQuote(d)} && cat run.json && cat exit_code 2>/dev/null; kill -0 ${process.pid} 2>/dev/null && echo alive; wc -c < output.log; tail -c ${LOG_TAIL_BYTES} output.log | base64`,
    );
    if (r.code === 0) n++;
  }
  return n;
}

async function time<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

(async () => {
  const single: number[] = [];
  const perRun: number[] = [];
  const trips = { single: 0, perRun: 0 };
  for (let i = 0; i < 3; i++) {
    const a = new LocalHost();
    const s = await time(() => listRuns(a, dir));
    if (s.value.runs.length !== RUNS) throw new Error(`listed ${s.value.runs.length} runs`);
    single.push(s.ms);
    trips.single = a.stats().roundTrips;
    const b = new LocalHost();
    const p = await time(() => oneCommandPerRun(b));
    if (p.value !== RUNS) throw new Error(`read ${p.value} runs`);
    perRun.push(p.ms);
    trips.perRun = b.stats().roundTrips;
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[1]!;
  console.log(`[bench runs] refresh of ${RUNS} runs on one host (median of 3, local host):`);
  console.log(`  one round trip (listing script): ${med(single).toFixed(0)} ms, ${trips.single} round trip(s)`);
  console.log(`  baseline, one command per run:   ${med(perRun).toFixed(0)} ms, ${trips.perRun} round trip(s)`);
  console.log(`  ratio: ${(med(perRun) / med(single)).toFixed(1)}x faster, ${trips.perRun / trips.single}x fewer round trips`);
  rmSync(dir, { recursive: true, force: true });
})();
