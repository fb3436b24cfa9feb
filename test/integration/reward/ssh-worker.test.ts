import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { SshHost } from '../../../src/core/remote/ssh-host';
import { FunctionScorer } from '../../../src/core/reward/scorers';

describe('reward worker on an SSH host (real sshd on loopback)', () => {
  let sshd: SshdFixture;
  let host: SshHost;
  before(async () => {
    sshd = await startSshd();
    host = sshd.makeHost();
  });
  after(async () => {
    await host.dispose();
    await sshd.stop();
  });

  it('uploads the harness and the function, scores on the host, keeps the judge key off every command line, times out a hang', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'medrl-ssh-ws-'));
    const fn = join(ws, 'ssh_fn.py');
    writeFileSync(
      fn,
      [
        'import os, time',
        'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '    if solution_str == "hang": time.sleep(60)',
        '    if solution_str == "slow": time.sleep(1.0)',
        '    return {"score": float(solution_str == ground_truth), "home": os.environ.get("HOME"), "key": os.environ.get("MEDRL_JUDGE_API_KEY")}',
      ].join('\n'),
    );
    const secret = `sk-${Date.now()}-secret`;
    const scorer = new FunctionScorer({ host, localPath: fn, env: { MEDRL_JUDGE_API_KEY: secret }, timeoutMs: 1500 });
    try {
      const running = scorer.run([
        { data_source: 'd', solution_str: 'slow', ground_truth: 'x' },
        { data_source: 'd', solution_str: 'yes', ground_truth: 'yes' },
        { data_source: 'd', solution_str: 'hang', ground_truth: 'x' },
      ]);
      await new Promise((r) => setTimeout(r, 700));
      const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
      assert.ok(!ps.includes(secret), 'the judge key is on no command line');
      const res = await running;
      assert.deepEqual(
        res.map((r) => r.score),
        [0, 1, null],
      );
      assert.equal(res[1]!.detail!.home, sshd.remoteHome, 'the function ran on the SSH host');
      assert.equal(res[1]!.detail!.key, secret, 'the function got the key through its environment');
      assert.match(res[2]!.error!, /timed out after 1\.5 s/);
      const listing = await host.readdir('~/.medrl/playground');
      assert.ok(listing.some((e) => /^reward_worker-[0-9a-f]{12}\.py$/.test(e.name)));
    } finally {
      scorer.dispose();
    }
  });
});
