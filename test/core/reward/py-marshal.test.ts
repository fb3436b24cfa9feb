import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { decodeMarshal, encodeMarshal } from '../../../src/core/reward/py-marshal';

/** Runs Python code with `data` (bytes) on stdin and returns its stdout bytes. */
function python(code: string, data: Buffer = Buffer.alloc(0)): Buffer {
  return execFileSync('python3', ['-c', code], { input: data });
}

describe("Python's marshal format (the reward worker's wire), checked against a real python3", () => {
  const value = {
    data_source: 'pubmedqa',
    solution_str: 'Zur Diagnose: Myokardinfarkt 🫀 — <answer>yes</answer>',
    ground_truth: ['yes', 'yes', 'no'],
    extra_info: {
      index: 7,
      negative: -3,
      big: 2 ** 40,
      bigNegative: -(2 ** 52) - 1,
      ratio: 0.25,
      ok: true,
      off: false,
      none: null,
      nested: [[], {}, ['a']],
    },
    long: 'x'.repeat(70_000),
    __proto__key: { ['__proto__']: 1 },
  };

  it('writes what Python reads as the same data (unicode, repeated strings, ints of any size, floats, nesting)', () => {
    const framed = encodeMarshal(value, { framed: true });
    assert.equal(framed.readUInt32LE(0), framed.length - 4);
    const out = python(
      'import sys, marshal, json; sys.stdout.write(json.dumps(marshal.loads(sys.stdin.buffer.read()), ensure_ascii=False))',
      encodeMarshal(value),
    );
    assert.deepEqual(JSON.parse(out.toString('utf8')), JSON.parse(JSON.stringify(value)));
  });

  it('reads what Python writes (references, interned keys, tuples, sets, bytes, large ints, NaN flagged)', () => {
    const code = [
      'import sys, marshal',
      'shared = {"score": 1.0, "pred": "yes"}',
      'v = {"id": 3, "rows": [shared, shared, {"score": 0.5, "pred": "no"}], "t": (1, "a"), "s": {2}, "b": b"ab",',
      '     "big": 2**62, "neg": -(2**40), "f": -0.5, "ufo": "Ölfleck ✓", "none": None, "flags": [True, False], 9: "int key"}',
      'sys.stdout.buffer.write(marshal.dumps(v, 4))',
    ].join('\n');
    const { value: got, nonFinite } = decodeMarshal(python(code));
    assert.equal(nonFinite, false);
    assert.deepEqual(got, {
      id: 3,
      rows: [
        { score: 1, pred: 'yes' },
        { score: 1, pred: 'yes' },
        { score: 0.5, pred: 'no' },
      ],
      t: [1, 'a'],
      s: [2],
      b: 'ab',
      big: 2 ** 62,
      neg: -(2 ** 40),
      f: -0.5,
      ufo: 'Ölfleck ✓',
      none: null,
      flags: [true, false],
      9: 'int key',
    });
    const nan = decodeMarshal(python('import sys, marshal; sys.stdout.buffer.write(marshal.dumps({"x": [float("nan")]}, 4))'));
    assert.equal(nan.nonFinite, true);
    assert.ok(Number.isNaN((nan.value as { x: number[] }).x[0]));
  });

  it('says what is wrong with bytes that are not a marshalled value', () => {
    assert.throws(() => decodeMarshal(Buffer.from([0x5b, 2, 0, 0, 0, 0x69])), /marshal: truncated at byte 6/);
    assert.throws(
      () => decodeMarshal(python('import sys, marshal; sys.stdout.buffer.write(marshal.dumps(compile("1", "f", "eval"), 4))')),
      /unsupported type "c"/,
    );
    assert.throws(() => decodeMarshal(Buffer.from([0x4e, 0x4e])), /1 bytes after the value/);
  });
});
