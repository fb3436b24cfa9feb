import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { BLOCK_BYTES, BLOCK_ROWS, BlockSpill } from '../../../src/core/metrics/block-spill';
import { Float64Column } from '../../../src/core/metrics/float64-column';

/** What a column must read back: undefined for a row not logged (a logged NaN is NaN). */
type Model = Array<number | undefined>;

function assertSameAs(col: Float64Column, model: Model, where: string): void {
  assert.equal(col.length, model.length, `length ${where}`);
  for (let i = 0; i <= model.length; i++) {
    const want = model[i];
    assert.equal(col.has(i), want !== undefined, `has(${i}) ${where}`);
    assert.ok(Object.is(col.get(i), want ?? NaN), `get(${i}) is ${col.get(i)}, not ${want} ${where}`);
    assert.ok(Object.is(col.value(i), want), `value(${i}) ${where}`);
  }
}

const value = fc.oneof(fc.double(), fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, Number.MAX_VALUE, Number.MIN_VALUE));
/** Rows over a dozen blocks, so that a budget of two blocks spills nearly all of them. */
const row = fc.integer({ min: 0, max: BLOCK_ROWS * 12 });
const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), row, v: value }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: BLOCK_ROWS * 2 }), v: value }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('insertMissing' as const), row }) },
);

describe('metric columns over a spill file', () => {
  it('read back every row as a plain array does when nearly every block is spilled (NaN, not logged, infinities, -0)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-spill-'));
    let spilled = 0;
    try {
      fc.assert(
        fc.property(fc.array(op, { maxLength: 25 }), (ops) => {
          // A store per run: a column's last block stays resident, so columns of earlier runs would fill the budget.
          const spill = new BlockSpill({ budgetBytes: 2 * BLOCK_BYTES, dir });
          const col = new Float64Column(spill);
          const model: Model = [];
          let changedFrom = Infinity;
          for (const o of ops) {
            if (o.kind === 'set') {
              if (o.row < model.length) changedFrom = Math.min(changedFrom, o.row);
              while (model.length < o.row) model.push(undefined);
              model[o.row] = o.v;
              col.set(o.row, o.v);
            } else if (o.kind === 'append') {
              for (let k = 0; k < o.n; k++) {
                col.set(model.length, o.v + k);
                model.push(o.v + k);
              }
            } else if (o.row < model.length) {
              changedFrom = Math.min(changedFrom, o.row);
              model.splice(o.row, 0, undefined);
              col.insertMissing(o.row);
            } else col.insertMissing(o.row);
            assert.ok(spill.residentBlocks <= 2, `${spill.residentBlocks} blocks resident`);
          }
          assert.equal(col.takeChangedFrom(), changedFrom);
          assert.equal(col.takeChangedFrom(), Infinity);
          assertSameAs(col, model, `after ${JSON.stringify(ops)}`);
          // Reading everything again after it was all read back and spilled once more: what was written stays.
          assertSameAs(col, model, 'on a second reading');
          spilled += spill.fileBytes;
          // Handed over as blocks (a range's worker to the thread that merges): the same rows, spilled ones read back.
          const rows = col.length;
          const blocks = col.takeBlocks();
          assert.equal(col.length, 0);
          const copy = new Float64Column(new BlockSpill({ budgetBytes: Infinity }));
          for (let k = 0; k * BLOCK_ROWS < rows; k++)
            copy.appendWords(k * BLOCK_ROWS, blocks[k]!, Math.min(BLOCK_ROWS, rows - k * BLOCK_ROWS));
          assertSameAs(copy, model, 'handed over as blocks');
          // The store forgets the blocks handed over: a new column still gets the whole budget.
          const next = new Float64Column(spill);
          for (let i = 0; i < BLOCK_ROWS * 4; i += 97) next.set(i, i);
          assert.ok(spill.residentBlocks <= 2, `${spill.residentBlocks} blocks resident after a hand-over`);
          spill.close();
        }),
        { numRuns: 60 },
      );
      assert.ok(spilled > 0, 'nothing was spilled');
      assert.deepEqual(readdirSync(dir), [], 'a spill file is visible in its folder');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('share one budget between many columns, each reading back its own rows', () => {
    const spill = new BlockSpill({ budgetBytes: 8 * BLOCK_BYTES });
    try {
      const cols = Array.from({ length: 4 }, () => new Float64Column(spill));
      const rows = BLOCK_ROWS * 10 + 17;
      for (let i = 0; i < rows; i++) {
        for (let c = 0; c < cols.length; c++) if ((i + c) % 5 !== 0) cols[c]!.set(i, c === 2 && i % 1000 === 0 ? NaN : i * 10 + c);
        assert.ok(spill.residentBlocks <= 8, `${spill.residentBlocks} blocks resident at row ${i}`);
      }
      // Overwrite rows of spilled blocks in every column, then read all of them back.
      for (let c = 0; c < cols.length; c++) cols[c]!.set(c * BLOCK_ROWS + 3, -1 - c);
      for (let c = 0; c < cols.length; c++) {
        for (let i = 0; i < rows; i++) {
          const want = i === c * BLOCK_ROWS + 3 ? -1 - c : (i + c) % 5 === 0 ? undefined : c === 2 && i % 1000 === 0 ? NaN : i * 10 + c;
          assert.ok(Object.is(cols[c]!.value(i), want), `column ${c} row ${i}: ${cols[c]!.value(i)}, not ${want}`);
        }
      }
      assert.ok(spill.residentBlocks <= 8);
      assert.ok(spill.fileBytes >= (4 * 10 - 8) * BLOCK_BYTES, `spill file ${spill.fileBytes} bytes`);
    } finally {
      spill.close();
    }
  });

  it('create no file while a run fits the budget, and a private unlinked one once it does not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-spill-'));
    const spill = new BlockSpill({ budgetBytes: 4 * BLOCK_BYTES, dir });
    try {
      const col = new Float64Column(spill);
      for (let i = 0; i < BLOCK_ROWS * 4; i++) col.set(i, i);
      assert.equal(spill.fileStat(), undefined);
      assert.equal(spill.fileBytes, 0);
      col.set(BLOCK_ROWS * 4, 1);
      const file = spill.fileStat();
      assert.ok(file, 'no spill file past the budget');
      assert.equal(file.stats.mode & 0o777 & ~0o600, 0, `mode ${(file.stats.mode & 0o777).toString(8)}`);
      if (process.platform !== 'win32') {
        assert.equal(file.stats.nlink, 0, 'the spill file is still linked');
        assert.deepEqual(readdirSync(dir), []);
      }
      assert.equal(col.get(0), 0);
      assert.equal(col.get(BLOCK_ROWS * 4 - 1), BLOCK_ROWS * 4 - 1);
    } finally {
      spill.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('say which folder when a spilled block cannot be read back, never reading wrong values', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-spill-'));
    const spill = new BlockSpill({ budgetBytes: BLOCK_BYTES, dir });
    try {
      const col = new Float64Column(spill);
      for (let i = 0; i < BLOCK_ROWS * 3; i++) col.set(i, i);
      spill.close();
      assert.throws(
        () => col.get(0),
        (e: Error) => e.message.startsWith(`metric block spill file in ${dir}: could not `),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('hold a 1M-row × 64-metric run within the budget (it took 512 MB of blocks before)', () => {
    const budgetBytes = 48 << 20;
    const spill = new BlockSpill({ budgetBytes });
    try {
      global.gc?.();
      const before = process.memoryUsage();
      const cols = Array.from({ length: 64 }, () => new Float64Column(spill));
      const rows = 1_000_000;
      const started = Date.now();
      let peakResident = 0;
      for (let i = 0; i < rows; i++) {
        for (let c = 0; c < 64; c++) cols[c]!.set(i, i + c / 64);
        if ((i & 8191) === 0) peakResident = Math.max(peakResident, spill.residentBlocks);
      }
      const ms = Date.now() - started;
      global.gc?.();
      const after = process.memoryUsage();
      const mb = (n: number) => (n / 1e6).toFixed(1);
      console.log(
        `[1M × 64] set in ${ms} ms; resident blocks ${mb(peakResident * BLOCK_BYTES)} MB (budget ${mb(budgetBytes)} MB), spill file ${mb(spill.fileBytes)} MB; ` +
          `RSS ${mb(before.rss)} → ${mb(after.rss)} MB, arrayBuffers ${mb(before.arrayBuffers)} → ${mb(after.arrayBuffers)} MB (all in memory: 512 MB of blocks)`,
      );
      assert.ok(peakResident * BLOCK_BYTES <= budgetBytes, `${peakResident} blocks resident`);
      assert.ok(
        after.arrayBuffers - before.arrayBuffers < budgetBytes + (8 << 20),
        `arrayBuffers grew ${mb(after.arrayBuffers - before.arrayBuffers)} MB`,
      );
      for (const i of [0, 1, 8191, 8192, 500_000, rows - 1]) {
        for (const c of [0, 31, 63]) assert.equal(cols[c]!.get(i), i + c / 64, `column ${c} row ${i}`);
      }
    } finally {
      spill.close();
    }
  });
});
