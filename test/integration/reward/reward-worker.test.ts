import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { RewardRunner } from '../../../src/core/reward/reward-runner';
import { localHarnessPath } from '../../../src/core/reward/staging';
import type { RewardSample } from '../../../src/core/scoring/sample';
import { VERL_PYTHON } from '../runs/run-fixture';

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
const sample = (solution: string, gt: unknown = 'yes', extra: Partial<RewardSample> = {}): RewardSample => ({
  data_source: 'pubmedqa',
  solution_str: solution,
  ground_truth: gt,
  extra_info: { index: 1 },
  ...extra,
});

describe('reward worker (real python3)', () => {
  it('scores a verl function (number, bool, dict with extra keys) in input order, one process for all samples', async () => {
    const file = fnFile(
      'verl_ok.py',
      [
        'import os',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):',
        '    if solution_str == "bool": return True',
        '    if solution_str == "dict": return {"score": 0.5, "pred": solution_str, "pid": os.getpid()}',
        '    return 1.0 if solution_str.strip().lower() == ground_truth else 0.0',
      ].join('\n'),
    );
    const r = runner(file);
    const info = await r.info();
    assert.equal(info.ok, true);
    assert.equal(info.kind, 'verl');
    assert.equal(info.name, 'compute_score');
    const samples = [
      sample('yes'),
      sample('no'),
      sample('bool'),
      sample('dict'),
      ...Array.from({ length: 300 }, (_, i) => sample(i % 2 ? 'yes' : 'no')),
    ];
    const res = await r.run(samples);
    assert.deepEqual(
      res.slice(0, 4).map((x) => [x.index, x.score, x.error]),
      [
        [0, 1, null],
        [1, 0, null],
        [2, 1, null],
        [3, 0.5, null],
      ],
    );
    assert.equal(res[3]!.detail!.pred, 'dict');
    assert.equal(res.length, 304);
    assert.ok(res.every((x, i) => x.index === i && x.error === null));
    const again = await r.run([sample('dict')]);
    assert.equal(again[0]!.detail!.pid, res[3]!.detail!.pid, 'the same persistent process answers the next run');
  });

  it('reports raising, printing, bad return types and non-finite scores per sample, and keeps going', async () => {
    const file = fnFile(
      'verl_bad.py',
      [
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
      ].join('\n'),
    );
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
    const file = fnFile(
      'verl_stream.py',
      [
        'class Odd:',
        '    def __repr__(self): return "Odd()"',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    i = extra_info["index"]',
        '    if i % 997 == 0: print("checked", i)',
        '    if i % 1009 == 0: raise KeyError(i)',
        '    if i == 4242: return {"score": 1.0, "f1": float("nan")}',
        '    if i == 4243: return {"score": 1.0, "tags": {"b"}, "pair": (1, 2), "obj": Odd()}',
        '    return {"score": i / 10000, "i": i}',
      ].join('\n'),
    );
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

  it('sends NumPy scalars and small arrays in a returned dict back as numbers and lists, a large array as its repr', async () => {
    const file = fnFile(
      'verl_numpy.py',
      [
        'import numpy as np',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    return {"score": np.float32(0.5), "acc": np.float32(0.25), "n": np.int64(3), "ok": np.bool_(True),',
        '            "per_turn": np.array([0.5, 1.0]), "big": np.zeros(5000)}',
      ].join('\n'),
    );
    const [res] = await runner(file, { python: VERL_PYTHON }).run([sample('x')]);
    assert.equal(res!.error, null);
    assert.equal(res!.score, 0.5);
    const { big, ...rest } = res!.detail as Record<string, unknown>;
    assert.deepEqual(rest, { score: 0.5, acc: 0.25, n: 3, ok: true, per_turn: [0.5, 1] });
    assert.match(String(big), /^array\(\[0\., 0\., 0\., \.\.\./);
  });

  it('ignores what setup lines print before the worker starts (reported, not taken for results)', async () => {
    const logged: string[] = [];
    const file = fnFile('verl_setup.py', 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.5\n');
    const r = runner(file, { setup: ['echo "conda says hi"', 'printf "no newline"'], log: (line) => logged.push(line) });
    assert.deepEqual(
      (await r.run([sample('a'), sample('b')])).map((x) => x.score),
      [0.5, 0.5],
    );
    assert.ok(
      logged.some((l) => l.endsWith('not a protocol line: conda says hi')),
      logged.join('\n'),
    );
  });

  it('times out a hanging call, and kills and restarts a worker whose call cannot be interrupted; nothing else is lost', async () => {
    const file = fnFile(
      'verl_hang.py',
      [
        'import signal, time',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    if solution_str == "sleep": time.sleep(60)',
        '    if solution_str == "spin":',
        '        while True: pass',
        '    if solution_str == "blocked":  # like C code that never returns to Python: the alarm cannot break in',
        '        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM]); time.sleep(60)',
        '    if solution_str == "slow": time.sleep(0.3)',
        '    return 1',
      ].join('\n'),
    );
    const r = runner(file, { timeoutMs: 700, graceMs: 800 });
    const t0 = Date.now();
    const res = await r.run(['a', 'sleep', 'b', 'spin', 'slow', 'blocked', 'c'].map((s) => sample(s)));
    assert.deepEqual(
      res.map((x) => x.score),
      [1, null, 1, null, 1, null, 1],
    );
    assert.match(res[1]!.error!, /timed out after 0\.7 s/);
    assert.match(res[3]!.error!, /timed out after 0\.7 s/);
    assert.match(res[5]!.error!, /timed out after 0\.7 s \(the call could not be interrupted: the worker was killed and restarted\)/);
    assert.ok(res[4]!.latencyMs >= 290, 'a slow call that ends in time is scored with its latency');
    // The hanging calls sleep 60 s or spin for ever: well under a minute proves they were cut short (restarts are slow on a loaded machine).
    assert.ok(Date.now() - t0 < 30_000, `took ${Date.now() - t0} ms`);
  });

  it("a subprocess works and its output is that sample's stdout/stderr, like a print; it cannot read or write the wire", async () => {
    const file = fnFile(
      'verl_subprocess.py',
      [
        'import os, subprocess, sys',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    if solution_str == "run": subprocess.run(["echo", "from echo"], check=True); return 1.0',
        '    if solution_str == "system": return 1.0 if os.system("echo from system; echo err from system >&2") == 0 else 0.5',
        '    if solution_str == "mixed": print("before"); subprocess.run(["sh", "-c", "echo middle"], check=True); print("after"); return 0.5',
        '    if solution_str == "cat": return float(subprocess.run(["cat"], capture_output=True).stdout == b"")',
        '    if solution_str == "fd": os.write(1, b"raw fd 1\\n"); os.write(2, b"raw fd 2\\n"); return 0.25',
        '    if solution_str == "flood": sys.stdout.write("x" * 100000); return 0.75',
        '    return 0.0',
      ].join('\n'),
    );
    const r = runner(file);
    // The first part of a batch once closed descriptor 1 for good: the subprocess runs come after a sample that printed nothing.
    const res = await r.run(['quiet', 'run', 'system', 'mixed', 'cat', 'fd', 'quiet', 'flood', 'run'].map((s) => sample(s)));
    assert.deepEqual(
      res.map((x) => [x.score, x.error]),
      [
        [0, null],
        [1, null],
        [1, null],
        [0.5, null],
        [1, null],
        [0.25, null],
        [0, null],
        [0.75, null],
        [1, null],
      ],
    );
    assert.deepEqual([res[1]!.stdout, res[1]!.stderr], ['from echo\n', '']);
    assert.deepEqual([res[2]!.stdout, res[2]!.stderr], ['from system\n', 'err from system\n']);
    assert.equal(res[3]!.stdout, 'before\nmiddle\nafter\n', 'prints and a subprocess keep their order');
    assert.deepEqual([res[5]!.stdout, res[5]!.stderr], ['raw fd 1\n', 'raw fd 2\n']);
    assert.deepEqual([res[0]!.stdout, res[6]!.stdout, res[6]!.stderr], ['', '', '']);
    assert.equal(res[7]!.stdout, `${'x'.repeat(65536)}\n[medrl: ${100000 - 65536} more bytes of output not kept]\n`);
    assert.equal(res[8]!.stdout, 'from echo\n');
  });

  it('reports a crashed worker (os._exit, a segfault) as a crash with its exit, at once, for that sample only; a restarted worker goes on', async () => {
    const file = fnFile(
      'verl_crash.py',
      [
        'import ctypes, os, subprocess',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    if solution_str == "exit": os._exit(3)',
        '    if solution_str == "orphan":  # a child that outlives the worker',
        '        subprocess.Popen(["sleep", "30"]); os._exit(4)',
        '    if solution_str == "segv": ctypes.string_at(0)',
        '    return {"score": 1.0, "pid": os.getpid()}',
      ].join('\n'),
    );
    const r = runner(file, { timeoutMs: 20_000 });
    const t0 = Date.now();
    const res = await r.run([...Array.from({ length: 300 }, () => 'ok'), 'exit', 'ok', 'orphan', 'ok', 'segv', 'ok'].map((s) => sample(s)));
    const took = Date.now() - t0;
    assert.equal(res.length, 306);
    assert.ok(res.filter((_, i) => ![300, 302, 304].includes(i)).every((x) => x.score === 1 && x.error === null));
    assert.equal(res[300]!.error, 'the reward worker crashed during this call (exited with code 3); it was restarted');
    assert.equal(res[302]!.error, 'the reward worker crashed during this call (exited with code 4); it was restarted');
    // faulthandler's traceback of the crash, from the worker's own stderr
    assert.match(
      res[304]!.error!,
      /^the reward worker crashed during this call \(killed by SIGSEGV: [^]*verl_crash\.py", line 6 in compute_score/,
    );
    assert.ok(
      res.every((x) => x.latencyMs < 5000),
      'a crash is not charged the timeout',
    );
    assert.ok(took < 60_000, `took ${took} ms`);
    assert.ok(new Set(res.map((x) => x.detail?.pid).filter(Boolean)).size >= 4, 'each crash restarts the worker');
  });

  it('streams: results in input order from several workers, reading at most two batches per worker ahead of a slow caller', async () => {
    const file = fnFile(
      'verl_stream_order.py',
      'import os, time\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    if extra_info["i"] % 50 == 0: time.sleep(0.02)\n    return {"score": extra_info["i"], "pid": os.getpid()}\n',
    );
    const r = runner(file, { workers: 3, batchSize: 100 });
    let read = 0;
    let taken = 0;
    let ahead = 0;
    async function* source(n: number) {
      for (let i = 0; i < n; i++) {
        read++;
        ahead = Math.max(ahead, read - taken);
        yield sample('x', 'y', { extra_info: { i } });
      }
    }
    const pids = new Set<unknown>();
    for await (const x of r.stream(source(3000))) {
      assert.deepEqual([x.index, x.score, x.error], [taken, taken, null]);
      pids.add(x.detail!.pid);
      taken++;
      // the caller is slow now and then (a full pipe)
      if (taken % 500 === 0) await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(taken, 3000);
    // two batches per worker, and the one result the caller holds
    assert.ok(ahead <= 2 * 100 * 3 + 1, `read ${ahead} samples ahead of the caller`);
    assert.equal(pids.size, 3);
    // A short source is shared out too; a caller that stops early stops the reading, and the runner is still usable.
    [read, taken, ahead] = [0, 0, 0];
    const few = new Set<unknown>();
    for await (const x of r.stream(source(6))) few.add(x.detail!.pid);
    assert.equal(few.size, 3);
    [read, taken, ahead] = [0, 0, 0];
    for await (const x of r.stream(source(100_000))) if (x.index === 9) break;
    assert.ok(read <= 2 * 100 * 3 + 10, `read ${read} samples for a caller that took 10`);
    assert.deepEqual(
      (await r.run([sample('x', 'y', { extra_info: { i: 7 } })])).map((x) => x.score),
      [7],
    );
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
    const trl = fnFile(
      'trl_fn.py',
      [
        'def accuracy_reward(completions, solution, **kwargs):',
        '    out = []',
        '    for c, s in zip(completions, solution):',
        '        text = c[0]["content"] if isinstance(c, list) else c',
        '        out.append(None if s is None else float(text.strip() == s))',
        '    return out',
      ].join('\n'),
    );
    const r = runner(trl);
    assert.equal((await r.info()).kind, 'trl');
    const chat = [{ role: 'user', content: 'Is it?' }];
    const res = await r.run([
      sample('yes', null, { prompt: chat, extra: { solution: 'yes' } }),
      sample('no', null, { prompt: 'Is it?', extra: { solution: 'yes' } }),
      sample('x', null, { extra: { solution: null } }),
    ]);
    assert.deepEqual(
      res.map((x) => [x.score, x.error]),
      [
        [1, null],
        [0, null],
        [null, null],
      ],
    );
    const asyncFile = fnFile(
      'async_fn.py',
      'import asyncio\nasync def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):\n    await asyncio.sleep(0.01)\n    return {"score": 1.0, "kw": sorted(kw)}\n',
    );
    const a = await runner(asyncFile).run([sample('x', 'y', { extra: { tag: 1 } })]);
    assert.deepEqual([a[0]!.score, a[0]!.detail!.kw], [1, ['tag']]);
  });

  it('gives the function the judge settings through its environment (not the command line), and says which function to name', async () => {
    const file = fnFile(
      'env_fn.py',
      'import os\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return {"score": 1, "url": os.environ.get("MEDRL_JUDGE_URL"), "key": os.environ.get("MEDRL_JUDGE_API_KEY")}\n',
    );
    const res = await runner(file, { env: { MEDRL_JUDGE_URL: 'http://127.0.0.1:9/v1', MEDRL_JUDGE_API_KEY: 'sk-secret' } }).run([
      sample('x'),
    ]);
    assert.deepEqual([res[0]!.detail!.url, res[0]!.detail!.key], ['http://127.0.0.1:9/v1', 'sk-secret']);
    const two = fnFile(
      'two_fns.py',
      'def a(data_source, solution_str, ground_truth, extra_info=None):\n    return 1\ndef b(prompts, completions, **kw):\n    return [1]\n',
    );
    const info = await runner(two).info();
    assert.equal(info.ok, false);
    assert.match(info.error!, /name the function \(FILE\.py:NAME\); reward functions found: a, b/);
    assert.equal((await runner(two, { name: 'b' }).info()).kind, 'trl');
  });

  it('spreads samples over several workers and cancels a batch, every sample still answered', async () => {
    const file = fnFile(
      'slow_fn.py',
      'import time, os\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    start = time.time()\n    time.sleep(0.05)\n    return {"score": 1, "pid": os.getpid(), "start": start, "end": time.time()}\n',
    );
    const r = runner(file, { workers: 4 });
    const res = await r.run(Array.from({ length: 40 }, () => sample('x')));
    assert.equal(new Set(res.map((x) => x.detail!.pid)).size, 4);
    // Samples ran at the same time in different workers (measured inside the workers, so a loaded machine cannot fake it).
    const spans = res.map((x) => x.detail as { pid: number; start: number; end: number });
    assert.ok(
      spans.some((a) => spans.some((b) => a.pid !== b.pid && a.start < b.end && b.start < a.end)),
      'four workers overlap',
    );
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const cancelled = await r.run(
      Array.from({ length: 200 }, () => sample('x')),
      { signal: ac.signal },
    );
    assert.equal(cancelled.filter(Boolean).length, 200);
    assert.ok(cancelled.some((x) => x.error === 'cancelled') && cancelled.some((x) => x.score === 1));
  });
});
