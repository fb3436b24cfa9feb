// A 1 GB verl rollout dump: time to the first episode, to index it, to jump to any episode, and peak memory, each next to
// the baseline of reading the file once (LocalHost range reads, 4 MiB chunks) measured in the same run.
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LocalHost } from '../src/core/remote/local-host';
import { JsonlEpisodeFile } from '../src/core/episodes/episode-file';
import { writeBigDump } from '../test/core/episodes/big-dump';

async function main(): Promise<void> {
  const dir = join(__dirname, '.data');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'episodes-1g.jsonl');
  try {
    const episodes = writeBigDump(path, 1 << 30);
    const size = statSync(path).size;
    const host = new LocalHost();

    let t = performance.now();
    for (let pos = 0; ; pos += 4 << 20) {
      const b = await host.readFile(path, { start: pos, end: pos + (4 << 20) });
      if (b.length < 4 << 20) break;
    }
    const readOnceMs = performance.now() - t;

    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const file = new JsonlEpisodeFile(host, path, 100);
    t = performance.now();
    await file.first();
    const firstMs = performance.now() - t;
    t = performance.now();
    await file.index();
    const indexMs = performance.now() - t;
    clearInterval(sampler);

    const jumps: number[] = [];
    for (let k = 0; k < 200; k++) {
      const i = Math.floor(Math.random() * episodes);
      const s = performance.now();
      await file.read(i);
      jumps.push(performance.now() - s);
    }
    jumps.sort((a, b) => a - b);
    const p50 = jumps[100]!;
    const p99 = jumps[197]!;
    const peakMb = (peak - base) / 2 ** 20;
    const row = (name: string, v: string, target: string, ratio: string) =>
      console.log(`${name.padEnd(26)} ${v.padStart(12)}   target ${target.padEnd(10)} ${ratio}`);
    console.log(
      `file: ${(size / 2 ** 30).toFixed(2)} GiB, ${episodes.toLocaleString('en')} episodes; baseline: reading the file once = ${readOnceMs.toFixed(0)} ms`,
    );
    row('time to first episode', `${firstMs.toFixed(1)} ms`, '< 300 ms', `${(firstMs / readOnceMs).toFixed(5)} x read-once`);
    row('index (one pass)', `${indexMs.toFixed(0)} ms`, '(background)', `${(indexMs / readOnceMs).toFixed(2)} x read-once`);
    row('jump to any episode p50', `${p50.toFixed(2)} ms`, '< 50 ms', `${(p50 / readOnceMs).toFixed(6)} x read-once`);
    row('jump to any episode p99', `${p99.toFixed(2)} ms`, '< 50 ms', `${(p99 / readOnceMs).toFixed(6)} x read-once`);
    row('peak memory (RSS growth)', `${peakMb.toFixed(0)} MB`, '< 200 MB', `${(peakMb / (size / 2 ** 20)).toFixed(3)} x file size`);
  } finally {
    rmSync(path, { force: true });
  }
}

void main();
