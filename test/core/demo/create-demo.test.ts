import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemo } from '../../../src/core/demo/create-demo';
import { loadWorkspaceConfig } from '../../../src/core/config/load-workspace-config';

const root = join(__dirname, '../../..');

describe('demo workspace', () => {
  it('is a valid workspace with the real data, its provenance and licences, and the run specs', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'demo-')), 'ws');
    const r = await createDemo(root, dir);
    assert.equal(r.refreshed, false);
    const loaded = await loadWorkspaceConfig(dir);
    assert.deepEqual(loaded.problems, []);
    for (const f of [
      'data/pubmedqa/ori_pqal-first200.json',
      'data/pubmedqa/LICENSE',
      'data/pubmedqa/PROVENANCE.md',
      'data/medec/medec-ms-validation-first200.csv',
      'data/medec/PROVENANCE.md',
      'configs/local-demo.yaml',
      'configs/rewards/multiple_choice_exact.py',
    ]) {
      assert.ok(r.files.includes(f), `${f} in ${r.files.join(', ')}`);
    }
    const pubmedqa = JSON.parse(readFileSync(join(dir, 'data/pubmedqa/ori_pqal-first200.json'), 'utf8')) as Record<
      string,
      { final_decision: string }
    >;
    assert.equal(Object.keys(pubmedqa).length, 200);
    assert.match(readFileSync(join(dir, 'data/medec/PROVENANCE.md'), 'utf8'), /CC BY 4\.0/);
  });

  it("refreshes its own folder but never overwrites a user's folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-'));
    await createDemo(root, dir);
    assert.equal((await createDemo(root, dir)).refreshed, true);
    const user = mkdtempSync(join(tmpdir(), 'user-'));
    mkdirSync(join(user, 'src'));
    writeFileSync(join(user, 'src/train.py'), 'print(1)\n');
    await assert.rejects(createDemo(root, user), /not empty and was not made by "medrl demo"/);
    assert.equal(readFileSync(join(user, 'src/train.py'), 'utf8'), 'print(1)\n');
    assert.equal(existsSync(join(user, 'medrl.yaml')), false);
  });
});
