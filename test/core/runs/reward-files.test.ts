import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rewardUpload } from '../../../src/core/runs/reward-files';
import { LocatedError } from '../../../src/core/errors/located-error';

const ROOT = join(__dirname, '../../..');

function workspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-reward-files-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}
async function problems(p: Promise<unknown>): Promise<Array<[string | undefined, number | undefined, string | undefined, string]>> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof LocatedError, String(err));
    return err.problems.map((x) => [x.file, x.line, x.field, x.message]);
  }
  assert.fail('expected a refusal');
}

describe('the reward upload carries the files the reward function imports (python3 ast)', () => {
  it('the seed rewards that import helpers get them; the others go alone', async () => {
    const names = async (f: string) => Object.keys((await rewardUpload(ROOT, `configs/rewards/${f}`, 'spec.yaml')).files).sort();
    assert.deepEqual(await names('diagnosis_judge.py'), ['diagnosis_judge.py', 'medrl_judge.py']);
    assert.deepEqual(await names('ecg_qa_hybrid.py'), ['ecg_qa_hybrid.py', 'medrl_judge.py', 'multiple_choice_exact.py']);
    assert.deepEqual(await names('multiple_choice_exact.py'), ['multiple_choice_exact.py']);
  });

  it('follows import / from-import / relative imports transitively, keeping the package layout', async () => {
    const ws = workspace({
      'rw/main.py':
        'import json, os\nimport helpers.text as t\nfrom scoring import weights\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    from lazy import later\n    return 1.0\n',
      'rw/helpers/__init__.py': '',
      'rw/helpers/text.py': 'from . import norm\nfrom .deep.leaf import x\n',
      'rw/helpers/norm.py': 'import re\n',
      'rw/helpers/deep/__init__.py': '',
      'rw/helpers/deep/leaf.py': 'x = 1\n',
      'rw/scoring/__init__.py': 'from .tables import TABLE\n',
      'rw/scoring/tables.py': 'TABLE = {}\n',
      'rw/scoring/weights.py': 'W = 1\n',
      'rw/lazy.py': 'later = 1\n',
      'rw/unused.py': 'raise SystemExit("never imported")\n',
    });
    const up = await rewardUpload(ws, 'rw/main.py', 'spec.yaml');
    assert.equal(up.main, 'main.py');
    assert.deepEqual(Object.keys(up.files).sort(), [
      'helpers/__init__.py',
      'helpers/deep/__init__.py',
      'helpers/deep/leaf.py',
      'helpers/norm.py',
      'helpers/text.py',
      'lazy.py',
      'main.py',
      'scoring/__init__.py',
      'scoring/tables.py',
      'scoring/weights.py',
    ]);
    assert.equal(up.files['scoring/tables.py'], 'TABLE = {}\n');
    assert.equal(up.local['helpers/deep/leaf.py'], join(ws, 'rw/helpers/deep/leaf.py'));
  });

  it('refuses a reward.path outside the workspace, naming reward.path', async () => {
    const ws = workspace({ 'r.py': '' });
    assert.deepEqual(await problems(rewardUpload(ws, '../.ssh/id_ed25519', 'spec.yaml')), [
      [
        'spec.yaml',
        undefined,
        'reward.path',
        `../.ssh/id_ed25519 is outside the workspace (${ws}): only the workspace's files are uploaded with a run; copy the reward function into it`,
      ],
    ]);
    const outside = workspace({ 'secret.py': 'KEY = 1\n' });
    symlinkSync(join(outside, 'secret.py'), join(ws, 'linked.py'));
    assert.match((await problems(rewardUpload(ws, 'linked.py', 'spec.yaml')))[0]![3], /linked\.py is outside the workspace/);
  });

  it('refuses imports that leave the workspace or cannot work, and syntax errors, naming file and line', async () => {
    const outside = workspace({ 'creds.py': 'TOKEN = "x"\n' });
    const ws = workspace({
      'rw/main.py': 'import creds\nimport pkg.inner\n',
      'rw/pkg/__init__.py': '',
      'rw/pkg/inner.py': '\n\nfrom ... import up\n',
    });
    symlinkSync(join(outside, 'creds.py'), join(ws, 'rw/creds.py'));
    const found = await problems(rewardUpload(ws, 'rw/main.py', 'spec.yaml'));
    assert.deepEqual(
      found.map((p) => [p[0], p[1]]),
      [
        [join(ws, 'rw/main.py'), 1],
        [join(ws, 'rw/pkg/inner.py'), 3],
      ],
    );
    assert.match(found[0]![3], /imports creds\.py, which is a link to .*creds\.py, outside the workspace/);
    assert.match(found[1]![3], /relative import \.\.\. cannot work \(it climbs out of the reward file's folder\)/);
    const rel = workspace({ 'main.py': 'x = 1\nfrom .helper import y\n', 'helper.py': 'y = 1\n' });
    assert.match(
      (await problems(rewardUpload(rel, 'main.py', 'spec.yaml')))[0]![3],
      /relative import \.helper cannot work \(the reward file is loaded as a top-level module\)/,
    );
    const bad = workspace({ 'main.py': 'import ok\n', 'ok.py': 'def f(:\n' });
    assert.deepEqual(
      (await problems(rewardUpload(bad, 'main.py', 'spec.yaml'))).map((p) => [p[0], p[1], p[3]]),
      [[join(bad, 'ok.py'), 1, 'Python syntax error: invalid syntax']],
    );
  });
});
