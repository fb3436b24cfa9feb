import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIST = join(__dirname, '../../../dist');

/**
 * Worker threads start by loading their bundle: with zod in it (pulled in by importing a plain value from a module that
 * also holds schemas), each of eight parse workers took 250-310 ms to start on 16 cores, and each PHI worker cost about 7
 * MB more. Nothing a worker runs validates with zod, so its bundle must not carry it.
 */
describe('the worker bundles (dist/*-worker.js) leave zod out', () => {
  for (const name of ['range-parse-worker.js', 'phi-worker.js', 'json-worker.js']) {
    it(`${name} has no zod in it`, () => {
      const code = readFileSync(join(DIST, name), 'utf8');
      assert.ok(!code.includes('$ZodType'), `${name} carries zod: a module it imports imports zod`);
      assert.ok(code.length < 100_000, `${name} is ${code.length} bytes`);
    });
  }
});
