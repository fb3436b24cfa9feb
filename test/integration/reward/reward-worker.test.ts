import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RewardRunner } from '../../../src/core/reward/reward-runner';
import { localHarnessPath } from '../../../src/core/reward/staging';
import type { RewardSample } from '../../../src/core/reward/types';

const dir = mkdtempSync(join(tmpdir(), 'medrl-reward-'));
const host = new LocalHost();
const runners: RewardRunner[] = [];
after(() => runners.forEach((r) => r.dispose()));

function fnFile(name: string, code: string): string {
  const file = join(dir, name);
  writeFileSync(file, code);
  return file;
}
function runner(file: string, opts: Partial<ConstructorParameters<typeof RewardRunner>[0]> = {}): RewardRunner {
  const r = new RewardRunner({ host, harnessPath: localHarnessPath(), fnPath: file, timeoutMs: 2000, graceMs: 1500, ...opts });
  runners.push(r);
  return r;
}
const sample = (solution: string, gt: unknown = 'yes', extra: Partial<RewardSample> = {}): RewardSample => ({ data_source: 'pubmedqa', solution_str: solution, ground_truth: gt, extra_info: { index: 1 }, ...extra });

describe('reward worker (real python3)', () => {
  it('scores a verl function (number, bool, dict with extra keys) in input order, one process for all samples', async () => {
    const file = fnFile('verl_ok.py', [
      'import os',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):',
      '    if solution_str == "bool": return True',
      '    if solution_str == "dict": return {"score": 0.5, "pred": solution_str, "pid": os.getpid()}',
      '    return 1.0 if solution_str.strip().lower() == ground_truth else 0.0',
    ].join('\n'));
    const r = runner(file);
    const info = await r.info();
    assert.equal(info.ok, true);
    assert.equal(info.kind, 'verl');
    assert.equal(info.name, 'compute_score');
    const samples = [sample('yes'), sample('no'), sample('bool'), sample('dict'), ...Array.from({ length: 300 }, (_, i) => sample(i % 2 ? 'yes' : 'no'))];
    const res = await r.run(samples);
    assert.deepEqual(res.slice(0, 4).map((x) => [x.index, x.score, x.error]), [[0, 1, null], [1, 0, null], [2, 1, null], [3, 0.5, null]]);
    assert.equal(res[3]!.detail!.pred, 'dict');
    assert.equal(res.length, 304);
    assert.ok(res.every((x, i) => x.index === i && x.error === null));
    const again = await r.run([sample('dict')]);
    assert.equal(again[0]!.detail!.pid, res[3]!.detail!.pid, 'the same persistent process answers the next run');
  });

  it('reports raising, printing, bad return types and non-finite scores per sample, and keeps going', async () => {
    const file = fnFile('verl_bad.py', [
      'import sys',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
      '    if solution_str == "raise": raise ValueError("no answer tag in " + repr(solution_str))',
      '    if solution_str == "print": print("parsed:", solution_str); print("warn", file=sys.stderr); return 1',
      '    if solution_str == "str": return "0.9"',
      '    if solution_str == "none": return None',
      '    if solution_str == "nodict": return {"acc": 1}',
      '    if solution_str == "nan": return float("nan")',
      '    if solution_str == "nandict": return {"score": float("inf"), "why": "x"}',
      '    if solution_str == "exit": sys.exit(3)',
      '    return 0',
    ].join('\n'));
    const res = await runner(file).run(['raise', 'print', 'str', 'none', 'nodict', 'nan', 'exit', 'ok', 'nandict'].map((s) => sample(s)));
    assert.match(res[0]!.error!, /^ValueError: no answer tag in 'raise'/);
    assert.match(res[0]!.traceback!, /verl_bad\.py", line 3, in compute_score/);
    assert.deepEqual([res[1]!.score, res[1]!.stdout, res[1]!.stderr, res[1]!.error], [1, 'parsed: print\n', 'warn\n', null]);
    assert.match(res[2]!.error!, /returned str '0\.9'/);
    assert.match(res[3]!.error!, /returned NoneType/);
    assert.match(res[4]!.error!, /dict without 'score' \(keys: acc\)/);
    assert.match(res[5]!.error!, /non-finite/);
    assert.match(res[6]!.error!, /called exit\(3\)/);
    assert.deepEqual([res[7]!.score, res[7]!.error], [0, null]);
    assert.deepEqual([res[8]!.score, res[8]!.error], [null, 'TypeError: returned a non-finite score (inf)']);
  });

  it('keeps every print, error and detail with its own sample across a long streamed batch; details are plain data', async () => {
    const file = fnFile('verl_stream.py', [
      'class Odd:',
      '    def __repr__(self): return "Odd()"',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
      '    i = extra_info["index"]',
      '    if i % 997 == 0: print("checked", i)',
      '    if i % 1009 == 0: raise KeyError(i)',
      '    if i == 4242: return {"score": 1.0, "f1": float("nan")}',
      '    if i == 4243: return {"score": 1.0, "tags": {"b"}, "pair": (1, 2), "obj": Odd()}',
      '    return {"score": i / 10000, "i": i}',
    ].join('\n'));
    const samples = Array.from({ length: 5000 }, (_, i) => sample('x', 'y', { extra_info: { index: i } }));
    const res = await runner(file, { batchSize: 3000 }).run(samples);
    for (const [i, r] of res.entries()) {
      assert.equal(r.index, i);
      if (i % 1009 === 0) assert.equal(r.error, `KeyError: ${i}`);
      else if (i !== 4242) assert.equal(r.score, i === 4243 ? 1 : i / 10000, `sample ${i}`);
      assert.equal(r.stdout, i % 997 === 0 ? `checked ${i}\n` : '', `stdout of sample ${i}`);
    }
    assert.deepEqual([res[4242]!.score, res[4242]!.error], [null, 'returned a dict holding NaN or an infinity (JSON cannot hold it)']);
    assert.deepEqual(res[4243]!.detail, { score: 1, tags: ['b'], pair: [1, 2], obj: 'Odd()' });
  });

  it('ignores what setup lines print before the worker starts (reported, not taken for results)', async () => {
    const logged: string[] = [];
    const file = fnFile('verl_setup.py', 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.5\n');
    const r = runner(file, { setup: ['echo "conda says hi"', 'printf "no newline"'], log: (line) => logged.push(line) });
    assert.deepEqual((await r.run([sample('a'), sample('b')])).map((x) => x.score), [0.5, 0.5]);
    assert.ok(logged.some((l) => l.endsWith('not a protocol line: conda says hi')), logged.join('\n'));
  });

  it('times out a hanging call, and kills and restarts a worker whose call cannot be interrupted; nothing else is lost', async () => {
    const file = fnFile('verl_hang.py', [
      'import signal, time',
      'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
      '    if solution_str == "sleep": time.sleep(60)',
      '    if solution_str == "spin":',
      '        while True: pass',
      '    if solution_str == "blocked":  # like C code that never returns to Python: the alarm cannot break in',
    '        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM]); time.sleep(60)',
      '    if solution_str == "slow": time.sleep(0.3)',
      '    return 1',
    ].join('\n'));
    const r = runner(file, { timeoutMs: 700, graceMs: 800 });
    const t0 = Date.now();
    const res = await r.run(['a', 'sleep', 'b', 'spin', 'slow', 'blocked', 'c'].map((s) => sample(s)));
    assert.deepEqual(res.map((x) => x.score), [1, null, 1, null, 1, null, 1]);
    assert.match(res[1]!.error!, /timed out after 0\.7 s/);
    assert.match(res[3]!.error!, /timed out after 0\.7 s/);
    assert.match(res[5]!.error!, /timed out after 0\.7 s \(the call could not be interrupted: the worker was killed and restarted\)/);
    assert.ok(res[4]!.latencyMs >= 290, 'a slow call that ends in time is scored with its latency');
    assert.ok(Date.now() - t0 < 8000);
  });

  it('reloads the function when its file changes, and reports a broken file on every sample until it is fixed', async () => {
    const file = fnFile('verl_edit.py', 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.25\n');
    const r = runner(file);
    const reloads: string[] = [];
    r.onReload = (info) => reloads.push(info.ok ? `ok:${info.name}` : `broken`);
    assert.equal((await r.run([sample('x')]))[0]!.score, 0.25);
    writeFileSync(file, 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.75\n');
    utimesSync(file, new Date(), new Date(Date.now() + 2000));
    assert.equal((await r.run([sample('x')]))[0]!.score, 0.75);
    writeFileSync(file, 'def compute_score(data_source, solution_str:\n');
    utimesSync(file, new Date(), new Date(Date.now() + 4000));
    const broken = await r.run([sample('x'), sample('y')]);
    assert.ok(broken.every((x) => x.score === null && /cannot load .*verl_edit\.py: SyntaxError/.test(x.error!)));
    assert.deepEqual(reloads, ['ok:compute_score', 'broken']);
  });

  it('runs a TRL function (conversational completions, columns as kwargs, None allowed) and an async verl function', async () => {
    const trl = fnFile('trl_fn.py', [
      'def accuracy_reward(completions, solution, **kwargs):',
      '    out = []',
      '    for c, s in zip(completions, solution):',
      '        text = c[0]["content"] if isinstance(c, list) else c',
      '        out.append(None if s is None else float(text.strip() == s))',
      '    return out',
    ].join('\n'));
    const r = runner(trl);
    assert.equal((await r.info()).kind, 'trl');
    const chat = [{ role: 'user', content: 'Is it?' }];
    const res = await r.run([
      sample('yes', null, { prompt: chat, extra: { solution: 'yes' } }),
      sample('no', null, { prompt: 'Is it?', extra: { solution: 'yes' } }),
      sample('x', null, { extra: { solution: null } }),
    ]);
    assert.deepEqual(res.map((x) => [x.score, x.error]), [[1, null], [0, null], [null, null]]);
    const asyncFile = fnFile('async_fn.py', 'import asyncio\nasync def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n    await asyncio.sleep(0.01)\n    return {"score": 1.0, "kw": sorted(kw)}\n');
    const a = await runner(asyncFile).run([sample('x', 'y', { extra: { tag: 1 } })]);
    assert.deepEqual([a[0]!.score, a[0]!.detail!.kw], [1, ['tag']]);
  });

  it('gives the function the judge settings through its environment (not the command line), and says which function to name', async () => {
    const file = fnFile('env_fn.py', 'import os\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {"score": 1, "url": os.environ.get("MEDRL_JUDGE_URL"), "key": os.environ.get("MEDRL_JUDGE_API_KEY")}\n');
    const res = await runner(file, { env: { MEDRL_JUDGE_URL: 'http://127.0.0.1:9/v1', MEDRL_JUDGE_API_KEY: 'sk-secret' } }).run([sample('x')]);
    assert.deepEqual([res[0]!.detail!.url, res[0]!.detail!.key], ['http://127.0.0.1:9/v1', 'sk-secret']);
    const two = fnFile('two_fns.py', 'def a(data_source, solution_str, ground_truth, extra_info=None):\n    return 1\ndef b(prompts, completions, **kw):\n    return [1]\n');
    const info = await runner(two).info();
    assert.equal(info.ok, false);
    assert.match(info.error!, /name the function \(FILE\.py:NAME\); reward functions found: a, b/);
    assert.equal((await runner(two, { name: 'b' }).info()).kind, 'trl');
  });

  it('spreads samples over several workers and cancels a batch, every sample still answered', async () => {
    const file = fnFile('slow_fn.py', 'import time, os\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    start = time.time()\n    time.sleep(0.05)\n    return {"score": 1, "pid": os.getpid(), "start": start, "end": time.time()}\n');
    const r = runner(file, { workers: 4 });
    const res = await r.run(Array.from({ length: 40 }, () => sample('x')));
    assert.equal(new Set(res.map((x) => x.detail!.pid)).size, 4);
    // Samples ran at the same time in different workers (measured inside the workers, so a loaded machine cannot fake it).
    const spans = res.map((x) => x.detail as { pid: number; start: number; end: number });
    assert.ok(spans.some((a) => spans.some((b) => a.pid !== b.pid && a.start < b.end && b.start < a.end)), 'four workers overlap');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const cancelled = await r.run(Array.from({ length: 200 }, () => sample('x')), { signal: ac.signal });
    assert.equal(cancelled.filter(Boolean).length, 200);
    assert.ok(cancelled.some((x) => x.error === 'cancelled') && cancelled.some((x) => x.score === 1));
  });
});
