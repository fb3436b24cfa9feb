import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSshd, type SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { execChecked } from '../../../src/core/remote/host';
import { newPhiSummary, openDatasetForPhi, scanDataset } from '../../../src/core/phi/scan-dataset';
import { redactDataset, SameFileError } from '../../../src/core/phi/redact-dataset';

const PHONES = ['555-123-4567', '555-987-6543'];

describe('phi scan and redact on a real SSH host (sshd on loopback)', () => {
  let fx: SshdFixture;
  let host: Host;
  before(async () => {
    fx = await startSshd();
    host = fx.makeHost({ name: 'gpu' });
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      prompt: [{ role: 'user', content: i === 1500 ? `Case ${i}: call ${PHONES[0]}` : `Case ${i}: fever and cough` }],
      reward_model: { ground_truth: i === 2999 ? `pager ${PHONES[1]}` : 'yes' },
      score: 1.0,
    }));
    await host.writeFile('~/phi/notes.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  });
  after(async () => {
    await host?.dispose();
    await fx?.stop();
  });

  it('scans the file where it lives, line and field of each phone', async () => {
    const summary = newPhiSummary();
    const hits = [];
    for await (const batch of scanDataset(await openDatasetForPhi(host, '~/phi/notes.jsonl'), summary))
      for (const h of batch) if (h.category === 'phone') hits.push([h.line, h.field, h.text]);
    assert.deepEqual(hits, [
      [1501, 'prompt[0].content', PHONES[0]],
      [3000, 'reward_model.ground_truth', PHONES[1]],
    ]);
    assert.equal(summary.rows, 3000);
  });

  it('redacts into a 0600 file on the host with no phone left, and refuses OUT == FILE however it is spelled', async () => {
    const summary = await redactDataset(host, '~/phi/notes.jsonl', '~/phi/out/notes.redacted.jsonl');
    assert.equal(summary.rows, 3000);
    assert.equal(summary.counts.phone, 2);
    const mode = (await execChecked(host, 'stat -c %a ~/phi/out/notes.redacted.jsonl')).stdout.trim();
    assert.equal(mode, '600');
    const text = (await host.readFile('~/phi/out/notes.redacted.jsonl')).toString('utf8');
    for (const p of PHONES) assert.ok(!text.includes(p), `${p} is left`);
    assert.equal(text.split('\n').length, 3001);
    assert.ok(text.includes('"Case 1500: call [PHONE]"') && text.includes('"pager [PHONE]"'));
    assert.deepEqual(
      (await host.readdir('~/phi/out')).map((e) => e.name),
      ['notes.redacted.jsonl'],
    );
    const absolute = `${await host.resolvePath('~')}/phi/notes.jsonl`;
    await assert.rejects(redactDataset(host, '~/phi/notes.jsonl', absolute), SameFileError);
  });
});
