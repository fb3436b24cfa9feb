import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { discoverEpisodes } from '../../../src/core/episodes/discover';
import { ReplaySession } from '../../../src/core/episodes/replay-session';
import { writeTrlCompletions } from '../../core/episodes/trl-fixture';

const FIX = join(__dirname, '../../fixtures/episodes');

describe('episodes on an SSH host (real sshd, SFTP range reads)', () => {
  let fx: SshdFixture;
  let host: Host;
  const dir = mkdtempSync(join(tmpdir(), 'medrl-remote-episodes-'));
  before(async () => {
    cpSync(join(FIX, 'verl-run'), join(dir, 'run'), { recursive: true });
    writeTrlCompletions(join(dir, 'trl', 'output'), [5]);
    fx = await startSshd();
    host = fx.makeHost();
  });
  after(async () => {
    await host.dispose();
    await fx.stop();
  });

  it("a run folder's dumps are indexed and read through range reads, the same as locally", async () => {
    const s = new ReplaySession(await discoverEpisodes(host, join(dir, 'run')));
    assert.deepEqual(
      s.steps().map((x) => `${x.collection}/${x.step}`),
      ['rollouts/1', 'rollouts/2', 'rollouts/3', 'validation/0', 'validation/2'],
    );
    const info = await s.indexStep({ collection: 'rollouts', step: 2 });
    assert.equal(info.episodes, 20);
    const ep = await s.episode({ collection: 'rollouts', step: 2 }, 7);
    const expected = JSON.parse(readFileSync(join(dir, 'run/rollouts/2.jsonl'), 'utf8').split('\n')[7]!) as { output: string; gts: string };
    assert.equal(ep.raw.response, expected.output);
    assert.equal(ep.groundTruth, expected.gts);
    const before = host.stats().bytesRead;
    await s.episode({ collection: 'rollouts', step: 2 }, 19);
    assert.ok(host.stats().bytesRead - before < 4096, 'one episode = one small range read');
  });

  it('a TRL completions parquet is read over SFTP with hyparquet', async () => {
    const [c] = await discoverEpisodes(host, join(dir, 'trl'));
    assert.equal(c!.name, 'completions');
    const t = await c!.files[0]!.index();
    assert.equal(t.length, 8);
    const ep = await c!.files[0]!.read(2);
    assert.equal(ep.step, 5);
    assert.deepEqual(Object.keys(ep.extra).sort(), ['accuracy_reward', 'format_reward']);
  });
});
