// Reward playground benchmarks (figures next to their baselines from the same run):
// 1. 1,000 judge calls to the stand-in judge with 200 ms latency: our batch (concurrency 32) vs one call at a time like
//    the seeds' loop (a python3 urllib loop; measured on 50 calls and extrapolated to 1,000, as printed), 3 runs.
// 2. 10,000 calls of a pure-Python reward function (configs/rewards/multiple_choice_exact.py) through the persistent
//    worker (end to end: samples in a JS array to scores in a JS array) vs a plain Python loop calling it directly
//    (timed inside python), runs interleaved.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { JudgeCache } from '../src/core/judge/judge-cache';
import { JudgeClient } from '../src/core/judge/judge-client';
import { judgeSamples } from '../src/core/judge/judge-scorer';
import { parseScoreSpec } from '../src/core/scoring/score-parser';
import { LocalHost } from '../src/core/remote/local-host';
import { RewardRunner } from '../src/core/reward/reward-runner';
import { localHarnessPath } from '../src/core/reward/staging';
import type { RewardSample } from '../src/core/scoring/sample';
import { startStandinServer } from '../test/integration/fixtures/openai-standin';

const ROOT = process.env.MEDRL_ROOT ?? join(__dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'medrl-bench-playground-'));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function judgeBench(): Promise<void> {
  const server = await startStandinServer(['--served-model-name', 'Judger', '--latency-ms', '200']);
  const reps = 3;
  const calls = 50;
  const script = [
    'import json, sys, time, urllib.request',
    'url, n = sys.argv[1], int(sys.argv[2])',
    't = time.perf_counter()',
    'for i in range(n):',
    '    body = json.dumps({"model": "Judger", "messages": [{"role": "user", "content": f"Reference: diagnosis {i % 5}\\nResponse: diagnosis {i % 7} (case {i})\\nJSON"}], "temperature": 0, "seed": 42}).encode()',
    '    req = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json", "Authorization": "Bearer EMPTY"})',
    '    json.loads(urllib.request.urlopen(req).read())["choices"][0]["message"]["content"]',
    'print((time.perf_counter() - t) * 1000)',
  ].join('\n');
  try {
    // Every prompt differs (case i), so the answer cache never answers in place of the judge.
    const samples: RewardSample[] = Array.from({ length: 1000 }, (_, i) => ({
      data_source: 'diagnosis',
      solution_str: `diagnosis ${i % 7} (case ${i})`,
      ground_truth: `diagnosis ${i % 5}`,
    }));
    const batch: number[] = [];
    const seq: number[] = [];
    let failed = 0;
    let cached = 0;
    for (let rep = 0; rep < reps; rep++) {
      // As the playground and the CLI run it: an on-disk answer cache (empty here, so every answer is asked for and written).
      const client = new JudgeClient(
        { name: 'bench', url: server.url, model: 'Judger', maxConcurrency: 32 },
        new JudgeCache(join(dir, `judge-cache-${rep}`)),
      );
      const t0 = performance.now();
      const res = await judgeSamples(
        { client, template: 'Reference: {ground_truth}\nResponse: {solution_str}\nJSON', parser: parseScoreSpec('json:score') },
        samples,
      );
      batch.push(performance.now() - t0);
      failed += res.filter((r) => r.error).length;
      cached += res.filter((r) => r.cached).length;
      const one = spawnSync('python3', ['-c', script, server.url, String(calls)], { encoding: 'utf8' });
      if (one.status !== 0) throw new Error(one.stderr);
      seq.push((Number(one.stdout.trim()) / calls) * 1000);
    }
    const ratios = batch.map((b, i) => seq[i]! / b);
    console.log(`judge, 1,000 samples, stand-in judge with 200 ms latency (median of ${reps} runs):`);
    console.log(
      `  our batch (concurrency 32, answer cache on): ${(median(batch) / 1000).toFixed(2)} s (${failed} failed, ${cached} from the cache; ideal ${(Math.ceil(1000 / 32) * 0.2).toFixed(1)} s)`,
    );
    console.log(
      `  baseline: one at a time (seeds' loop):      ${(median(seq) / 1000).toFixed(1)} s  (${calls} calls per run, extrapolated x${1000 / calls})`,
    );
    console.log(
      `  ratio: ${(median(seq) / median(batch)).toFixed(1)}x faster (median of the per-run ratios ${median(ratios).toFixed(1)}x; target >= 25x, ideal 32x)`,
    );
  } finally {
    await server.stop();
  }
}

async function workerBench(): Promise<void> {
  const fn = join(ROOT, 'configs/rewards/multiple_choice_exact.py');
  const n = 10_000;
  const reps = 11;
  const samples: RewardSample[] = Array.from({ length: n }, (_, i) => ({
    data_source: 'pubmedqa',
    solution_str: `The abstract reports outcome ${i}; the evidence supports the hypothesis.\n<answer>${['yes', 'no', 'maybe'][i % 3]}</answer>`,
    ground_truth: 'yes',
    extra_info: { index: i },
  }));
  const file = join(dir, 'samples.jsonl');
  writeFileSync(file, samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
  // The baseline: the same function over the same samples (already read into a list) in a plain Python loop, scores into
  // a list, timed inside Python; one process that loops again each time it is asked, so each figure sits next to a worker run.
  const plainScript = [
    'import importlib.util, json, sys, time',
    'spec = importlib.util.spec_from_file_location("fn", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
    'samples = [json.loads(l) for l in open(sys.argv[2])]',
    'for _ in sys.stdin:',
    '    t = time.perf_counter()',
    '    scores = [m.compute_score(**s) for s in samples]',
    '    ms = (time.perf_counter() - t) * 1000',
    '    print(json.dumps({"ms": ms, "sum": sum(r["score"] for r in scores)}), flush=True)',
  ].join('\n');
  const plain = spawn('python3', ['-c', plainScript, fn, file], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = createInterface({ input: plain.stdout })[Symbol.asyncIterator]();
  const plainLoop = async (): Promise<{ ms: number; sum: number }> => {
    plain.stdin.write('go\n');
    const line = await answers.next();
    if (line.done) throw new Error('the plain loop ended');
    return JSON.parse(line.value) as { ms: number; sum: number };
  };

  const runner = new RewardRunner({ host: new LocalHost(), harnessPath: localHarnessPath(), fnPath: fn, timeoutMs: 30_000 });
  const c0 = performance.now();
  const first = await runner.run(samples);
  const coldMs = performance.now() - c0;
  if (first.some((x) => x.error)) throw new Error('the worker failed samples');
  await plainLoop(); // warm-up, like the worker's first run
  const loops: number[] = [];
  const warm: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const p = await plainLoop();
    loops.push(p.ms);
    const w0 = performance.now();
    const res = await runner.run(samples);
    warm.push(performance.now() - w0);
    const sum = res.reduce((a, r) => a + (r.score ?? 0), 0);
    if (res.length !== n || res.some((x) => x.error) || sum !== p.sum)
      throw new Error(`the worker's scores differ from the plain loop's (${sum} vs ${p.sum})`);
  }
  runner.dispose();
  plain.stdin.end();
  const loop = median(loops);
  const ratios = warm.map((w, i) => w / loops[i]!);
  console.log(
    `reward worker, ${n.toLocaleString()} calls of multiple_choice_exact.compute_score (median of ${reps} runs, each next to a baseline run):`,
  );
  console.log(`  baseline: plain Python loop (samples in a list, scores into a list, timed inside python): ${loop.toFixed(0)} ms`);
  console.log(`  our worker, warm (samples in a JS array -> scores in a JS array, end to end): ${median(warm).toFixed(0)} ms`);
  console.log(
    `  ratio: ${(median(warm) / loop).toFixed(2)}x the plain loop (median of the per-run ratios ${median(ratios).toFixed(2)}x; target <= 1.5x)`,
  );
  console.log(`  (first run, starting python3 and loading the function: ${coldMs.toFixed(0)} ms)`);
}

(async () => {
  // Both figures depend on free cores (the worker and the extension run side by side): say how busy the machine was.
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  try {
    const only = process.env.MEDRL_BENCH_ONLY;
    if (only !== 'worker') await judgeBench();
    if (only !== 'judge') await workerBench();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
