import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { JsonlEpisodeFile } from '../../../src/core/episodes/episode-file';
import { stepSignals } from '../../../src/core/episodes/signals';
import { writeBigDump } from './big-dump';

describe('a 1 GB rollout dump', () => {
  it('shows its first episode at once, indexes in one streaming pass with bounded memory, then any episode is a seek', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-1gb-'));
    try {
      const path = join(dir, '100.jsonl');
      const episodes = writeBigDump(path, 1 << 30);
      const size = statSync(path).size;
      global.gc?.();
      const base = process.memoryUsage().rss;
      let peak = base;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
      const host = new LocalHost();
      const file = new JsonlEpisodeFile(host, path, 100);

      let t = performance.now();
      const first = await file.first();
      const firstMs = performance.now() - t;
      assert.equal(first?.score, 1);
      assert.ok(host.stats().bytesRead < 1 << 20, `the first episode read ${host.stats().bytesRead} bytes`);

      t = performance.now();
      const table = await file.index();
      const indexMs = performance.now() - t;
      clearInterval(sampler);
      assert.equal(table.length, episodes);
      // The generator repeats one block of 64 prompts × 8 responses: a group is all responses to one prompt, wherever they are.
      assert.equal(table.groupCount, 64);
      assert.equal(table.groupSize(0), episodes / 64);

      const before = host.stats().bytesRead;
      t = performance.now();
      const last = await file.read(episodes - 1);
      const mid = await file.read(Math.floor(episodes / 2) + 3);
      const seekMs = (performance.now() - t) / 2;
      assert.equal(last.index, episodes - 1);
      // The generator repeats 64 groups of 8: the episode read is the one at that position.
      const pos = (Math.floor(episodes / 2) + 3) % 512;
      const [g, k] = [Math.floor(pos / 8), pos % 8];
      assert.deepEqual([mid.dataSource, mid.score], [g % 2 ? 'diagagent' : 'medec', (g + k) % 3 === 0 ? 1 : 0]);
      assert.ok(host.stats().bytesRead - before < 64 << 10, 'a seek reads only its line');
      const s = stepSignals(table);
      assert.equal(s.episodes, episodes);
      const grewMb = (peak - base) / 2 ** 20;
      console.log(
        `[1 GB] ${(size / 2 ** 30).toFixed(2)} GiB, ${episodes} episodes: first ${firstMs.toFixed(1)} ms, index ${(indexMs / 1000).toFixed(1)} s, seek ${seekMs.toFixed(2)} ms, RSS +${grewMb.toFixed(0)} MB (index columns ${(table.bytes() / 2 ** 20).toFixed(1)} MB)`,
      );
      assert.ok(firstMs < 300, `first episode in ${firstMs} ms`);
      assert.ok(seekMs < 50, `seek in ${seekMs} ms`);
      assert.ok(grewMb < 200, `memory grew ${grewMb} MB`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
