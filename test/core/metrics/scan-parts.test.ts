import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { scanParts, type PartsSink } from '../../../src/core/metrics/scan-parts';
import { StepLineScan, scanVerlConsoleLine } from '../../../src/core/metrics/verl-console';
import { decimalStrings } from './decimal-strings';

/** The parts the WebAssembly path reads of `line` (from its first ` - `), with their values, as a fresh scan would. */
function wasmRead(line: string): { read: number; values: number[]; stoppedAt: number } {
  const b = Buffer.from(line);
  const values: number[] = [];
  const sink: PartsSink = {
    count: 0,
    addParts(n, _starts, _ends, vals) {
      for (let i = 0; i < n; i++) values.push(vals[i]!);
      this.count += n;
    },
  };
  const from = line.indexOf(' - ');
  const stoppedAt = scanParts().read(b, from, b.length, sink, {});
  return { read: values.length, values, stoppedAt };
}

/** All a scan says of a line. */
function seen(out: StepLineScan, ok: boolean): unknown {
  return {
    ok,
    step: out.step,
    keys: Array.from({ length: out.count }, (_, i) => out.key(i)),
    // Object.is: -0 and NaN as themselves.
    values: Array.from(out.values.subarray(0, out.count), (v) => (Object.is(v, -0) ? '-0' : v)),
    bad: [...out.bad],
    missing: [...out.missing],
    lastBad: out.lastBad,
    badStep: out.badStep,
    otherFormat: out.otherFormat,
    changedSlots: out.slots.slice(0, out.count).map((s) => s === undefined),
  };
}

/** Scans the lines with the WebAssembly path and without, line after line, and asserts both see the same. */
function sameAsJavaScript(lines: string[], wasm = new StepLineScan(), js = new StepLineScan({ wasm: false })): void {
  for (const line of lines) {
    const b = Buffer.from(`junk${line}\nnext`);
    const to = 4 + Buffer.byteLength(line);
    const a = seen(wasm, scanVerlConsoleLine(b, 4, to, wasm));
    const j = seen(js, scanVerlConsoleLine(b, 4, to, js));
    assert.deepEqual(a, j, line.slice(0, 200));
    // What the parser does with a line's slots: one per key, kept while the key stays.
    for (let i = 0; i < wasm.count; i++) wasm.slots[i] ??= {};
    for (let i = 0; i < js.count; i++) js.slots[i] ??= {};
  }
}

const significant = (text: string) => text.split(/e/i)[0]!.replace(/[-+.]/g, '').replace(/^0+/, '').length;

describe('the WebAssembly fast path of a verl step line (scan-parts.ts)', () => {
  it('is what its AssemblyScript source compiles to', () => {
    execFileSync(process.execPath, [join(__dirname, '../../../scripts/build-wasm.mjs'), '--check'], { stdio: 'pipe' });
  });

  it('reads Python reprs of random doubles into the double Number() gives, bit for bit, and reads all of them', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 80 }), (xs) => {
        const texts = xs.map(String);
        const line = `step:3${texts.map((t, i) => ` - m/${i}:${t}`).join('')}`;
        const got = wasmRead(line);
        const fast = texts.filter((t, i) => significant(t) <= 19 && Math.abs(xs[i]!) >= 1e-80 && Math.abs(xs[i]!) <= 1e80);
        assert.ok(got.read >= (fast.length === texts.length ? texts.length : 0), line);
        got.values.forEach((v, i) => assert.ok(Object.is(v, Number(texts[i])), texts[i]));
      }),
      { numRuns: 3_000 },
    );
  });

  it('agrees with Number() on arbitrary digit strings: signs, leading zeros, a point anywhere, exponents, ties', () => {
    fc.assert(
      fc.property(decimalStrings, (s) => {
        const got = wasmRead(`step:1 - x:${s}`);
        if (got.read === 1) assert.ok(Object.is(got.values[0], Number(s)), s);
        sameAsJavaScript([`step:1 - x:${s} - y:1`]);
      }),
      { numRuns: 30_000 },
    );
    // Exact ties between two doubles (odd 54-bit integers), which must round to even.
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 52n) - 1n }), fc.integer({ min: -3, max: 3 }), (m, e) => {
        const t = (1n << 53n) + 2n * m + 1n;
        const n = e >= 0 ? (t << BigInt(e)).toString() : (t * 5n ** BigInt(-e)).toString();
        const s = e >= 0 ? n : `${n}e${e}`;
        const got = wasmRead(`step:1 - x:${s}`);
        assert.equal(got.read, 1, s);
        assert.ok(Object.is(got.values[0], Number(s)), s);
      }),
      { numRuns: 10_000 },
    );
  });

  it('gives the same keys, values, flags and problems as the JavaScript path over any run of lines', () => {
    const part = fc.oneof(
      fc
        .tuple(fc.constantFrom('actor/pg_loss', 'critic/score/mean', 'a', 'timing_s/gen', 'x'.repeat(300)), fc.double())
        .map(([k, v]) => `${k}:${String(v)}`),
      fc.constantFrom(
        'actor/kl:np.float64(0.25)',
        'actor/kl:np.int64(3)',
        'val/acc:nan',
        'val/acc:None',
        'val/acc:inf',
        'bad/value:0.1x',
        'odd key:1',
        'quote"key:2',
        'brace{key:3',
        ':4',
        '  :4',
        'empty/value:',
        'tail:1e',
        'colons:in:key:5',
        '\u001b[36mcoloured:6\u001b[0m',
        'unicode/é:7',
        'trailing:8 ',
      ),
    );
    const line = fc
      .tuple(
        fc.constantFrom('', '(TaskRunner pid=12) ', '\u001b[36m(TaskRunner pid=3)\u001b[0m '),
        fc.nat(1000),
        fc.array(part, { maxLength: 40 }),
      )
      .map(([prefix, step, parts]) => `${prefix}step:${step}${parts.map((p) => ` - ${p}`).join('')}`);
    // Lines that repeat the last one's keys (the common case) with new values, and ones that change some.
    const run = fc
      .array(fc.tuple(line, fc.array(fc.double(), { maxLength: 40 }), fc.boolean()), { minLength: 1, maxLength: 12 })
      .map((ls) =>
        ls.flatMap(([l, vs, repeat]) => {
          if (!repeat) return [l];
          let i = 0;
          return [
            l,
            l.replace(/:(-?[\d.e+-]+|NaN|Infinity|-Infinity)(?= - |$)/g, () => `:${String(vs[i++ % Math.max(vs.length, 1)] ?? 1)}`),
          ];
        }),
      );
    fc.assert(
      fc.property(run, (lines) => sameAsJavaScript(lines)),
      { numRuns: 2_000 },
    );
  });

  it('keeps each scan’s keys apart when two take turns, and hands over lines too long for it', () => {
    const keys = (p: string, n: number, v: number) =>
      `step:${v}${Array.from({ length: n }, (_, i) => ` - ${p}${i}:${v + i / 7}`).join('')}`;
    const [w1, w2] = [new StepLineScan(), new StepLineScan()];
    const [j1, j2] = [new StepLineScan({ wasm: false }), new StepLineScan({ wasm: false })];
    // The second scan leaves in the module the keys the first one's next line has, where the first had others.
    for (let s = 0; s < 6; s++) {
      const p = s % 2 ? 'a/' : 'b/';
      sameAsJavaScript([keys(p, 10, s)], w2, j2);
      sameAsJavaScript([keys(p, 10, s)], w1, j1);
    }
    // More parts than one call reads (1024), and a line longer than its input (1 MB): the rest is read in JavaScript.
    sameAsJavaScript([keys('m', 1500, 1), keys('m', 1500, 2), `step:1 - big:${'1'.repeat(19)}${' - k:1'.repeat(200_000)}`]);
    const long = wasmRead(`step:1 - k:1${' - k:2'.repeat(200_000)}`);
    assert.equal(long.read, 0);
    const dense = wasmRead(keys('m', 1500, 1));
    assert.equal(dense.read, 1024);
  });
});
