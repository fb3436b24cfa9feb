import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, parseJsonLine, rowDepthProblem } from '../../../src/core/io/json-line';

const NAME = 'Johanna Smithfield';

describe('parseJsonLine: one JSON line as a trainer writes it', () => {
  it("reads Python json.dumps' NaN, Infinity and -Infinity as numbers, and leaves the words inside strings alone", () => {
    const r = parseJsonLine('{"score": NaN, "acc": [Infinity, -Infinity, 1.5], "note": "NaN or Infinity, -Infinity"}');
    assert.equal(r.error, undefined);
    assert.deepEqual(r.value, { score: NaN, acc: [Infinity, -Infinity, 1.5], note: 'NaN or Infinity, -Infinity' });
    const proto = parseJsonLine('{"__proto__": NaN}').value as Record<string, unknown>;
    assert.ok(Object.hasOwn(proto, '__proto__') && Number.isNaN(proto['__proto__']) && Object.getPrototypeOf(proto) === Object.prototype);
    // A whole document is read without a depth limit (its rows are checked one by one): NaN in it must not overflow.
    const deepNaN = parseJsonLine('['.repeat(6000) + 'NaN' + ']'.repeat(6000), Infinity);
    assert.equal(deepNaN.error, undefined);
  });

  it('refuses a row nested deeper than MAX_JSON_DEPTH as one bad row, without throwing', () => {
    const deep = '{"a":'.repeat(6000) + '1' + '}'.repeat(6000);
    assert.match(parseJsonLine(deep).error!, new RegExp(`nested more than ${MAX_JSON_DEPTH} levels deep`));
    const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    assert.equal(parseJsonLine(ok).error, undefined);
    // Brackets inside strings are text, not nesting.
    assert.equal(parseJsonLine(JSON.stringify({ note: '{'.repeat(5000) })).error, undefined);
    assert.match(rowDepthProblem(JSON.parse(deep))!, /nested more than/);
    assert.equal(rowDepthProblem(JSON.parse(ok)), undefined);
  });

  it('says what is wrong with a malformed line without quoting any of its text', () => {
    for (const line of [
      `{"note": "${NAME}" x}`,
      `${NAME}`,
      `{"note": "${NAME}`,
      `{"note": ${NAME}}`,
      `{"note": "${NAME}"}}`,
      `{"note": NaN "${NAME}"}`,
    ]) {
      const { error } = parseJsonLine(line);
      assert.match(error!, /^malformed JSON/, line);
      for (const word of NAME.split(' ')) assert.ok(!error!.includes(word), `${error} quotes the row`);
    }
  });
});
