import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventLoopTurn } from '../../../src/core/io/event-loop-turn';
import { readLineBytes } from '../../../src/core/io/line-reader';
import { LocalHost } from '../../../src/core/remote/local-host';

/**
 * Counts pieces of work per turn of the event loop: a callback re-armed on each turn (a message from the dashboard's page
 * waits for the loop's next turn) notes the most pieces done between two of its runs.
 */
function perTurn(): { piece(): void; most(): number } {
  let since = 0;
  let most = 0;
  let done = false;
  const tick = (): void => {
    most = Math.max(most, since);
    since = 0;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    piece: () => void since++,
    most: () => {
      done = true;
      return Math.max(most, since);
    },
  };
}

/** Pieces of work done by `readers` callers side by side, each waiting on `pause` before each: who ran, in order. */
async function sideBySide(readers: number, pieces: number, pause: () => Promise<void>): Promise<{ order: number[]; mostPerTurn: number }> {
  const order: number[] = [];
  const turns = perTurn();
  await Promise.all(
    Array.from({ length: readers }, async (_, r) => {
      for (let i = 0; i < pieces; i++) {
        await pause();
        order.push(r);
        turns.piece();
      }
    }),
  );
  return { order, mostPerTurn: turns.most() };
}

describe('event loop turns', () => {
  it('lets ten readers take turns, one piece per turn of the loop, so the loop turns between any two pieces', async () => {
    const { order, mostPerTurn } = await sideBySide(10, 5, eventLoopTurn);
    // Round robin: each reader's piece in turn, in the order they asked.
    assert.deepEqual(order.slice(0, 20), [...Array(10).keys(), ...Array(10).keys()]);
    assert.ok(mostPerTurn <= 2, `${mostPerTurn} pieces ran in one turn of the loop`);
    // What a plain setImmediate per piece does: every waiting reader's piece in the same turn.
    const plain = await sideBySide(10, 5, () => new Promise(setImmediate));
    assert.ok(plain.mostPerTurn >= 10, `setImmediate: ${plain.mostPerTurn}`);
  });

  it('ten line readers side by side take turns chunk by chunk, the loop turns between their chunks, and each reads its file whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-turns-'));
    try {
      const host = new LocalHost();
      const files = Array.from({ length: 10 }, (_, f) => {
        const path = join(dir, `log-${f}.txt`);
        writeFileSync(path, Array.from({ length: 4000 }, (_, i) => `file ${f} line ${i}`).join('\n') + '\n');
        return path;
      });
      const chunksSeen: number[] = [];
      const turns = perTurn();
      const counts = await Promise.all(
        files.map(async (path, f) => {
          let n = 0;
          let last = -1;
          for await (const line of readLineBytes(host, path, { chunkSize: 8 << 10, readAhead: 2 })) {
            const chunk = Math.floor(line.start / (8 << 10));
            if (chunk !== last) {
              chunksSeen.push(f);
              turns.piece();
            }
            last = chunk;
            assert.equal(line.buf.toString('utf8', line.from, line.to), `file ${f} line ${n}`);
            n++;
          }
          return n;
        }),
      );
      const mostPerTurn = turns.most();
      assert.deepEqual(counts, Array(10).fill(4000));
      // A message from the page waits behind a chunk or two, not a chunk of every reader.
      assert.ok(mostPerTurn <= 3, `${mostPerTurn} chunks were parsed in one turn of the loop`);
      // Once all have started, no reader is more than two chunks ahead of another.
      const perReader = Array<number>(10).fill(0);
      for (const f of chunksSeen) {
        perReader[f]!++;
        if (perReader.every((n) => n > 0))
          assert.ok(Math.max(...perReader) - Math.min(...perReader) <= 2, `chunks read per reader: ${perReader.join(' ')}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
