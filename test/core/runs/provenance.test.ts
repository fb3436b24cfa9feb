import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProvenance, provenanceSchema, publicUrl, sha256, type Provenance } from '../../../src/core/runs/provenance';
import { diffProvenance } from '../../../src/core/runs/provenance-diff';
import { differenceLines, provenanceSummary } from '../../../src/core/runs/provenance-text';
import { NO_MANIFEST, readRunProvenance, type RunProvenance } from '../../../src/core/runs/read-provenance';
import { unifiedDiff } from '../../../src/core/format/unified-diff';
import { LocalHost } from '../../../src/core/remote/local-host';
import { FACTS, SPEC, runRecord, judgeUse } from './provenance-fixtures';

const REWARD = [
  'def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
  '    pred = solution_str.strip().lower()',
  '    return float(pred == ground_truth)',
  '',
].join('\n');

/** A run as `medrl runs diff` reads it: its record, its manifest and its reward files' text. */
function side(id: string, specText: string, reward: string, at = '2025-03-01T10:00:00Z'): RunProvenance {
  const manifest = buildProvenance({
    id,
    dir: `/runs/${id}`,
    specText,
    workspace: '/home/me/ws',
    now: new Date(at),
    reward: { main: 'exact.py', function: 'compute_score', files: { 'exact.py': reward } },
    facts: FACTS,
    uses: {
      services: {},
      judges: {
        judge: judgeUse(),
      },
    },
  });
  return {
    host: 'gpu1',
    record: runRecord(id, { created: `2025-03-01T10:0${id.length % 10}:00Z` }),
    manifest: provenanceSchema.parse(manifest),
    rewardText: { 'exact.py': reward },
  };
}

describe('provenance manifest', () => {
  it('is what its schema says (version 1), and a manifest of another version is refused', () => {
    const m = side('run-a', SPEC, REWARD).manifest as Provenance;
    assert.equal(m.version, 1);
    assert.equal(m.spec.sha256, sha256(SPEC));
    assert.deepEqual(m.reward, {
      main: 'exact.py',
      function: 'compute_score',
      files: { 'exact.py': { sha256: sha256(REWARD), size: REWARD.length } },
    });
    assert.equal((m.spec.content as { overrides: Record<string, number> }).overrides['data.train_batch_size'], 8);
    assert.equal(provenanceSchema.safeParse({ ...m, version: 2 }).success, false);
    assert.equal(provenanceSchema.safeParse({ ...m, data: [{ ...m.data[0], sha256: 'not a hash' }] }).success, false);
  });

  it('keeps a password in a service URL out of the record', () => {
    assert.equal(publicUrl('http://user:sk-123@judge.internal:8000/v1'), 'http://judge.internal:8000/v1');
    assert.equal(publicUrl('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000/v1');
  });
});

describe('diffProvenance', () => {
  it('two runs that differ in one override and one reward line: exactly those two, with a unified diff of the file', () => {
    const a = side('run-a', SPEC, REWARD);
    const b = side(
      'run-bb',
      SPEC.replace('data.train_batch_size: 8', 'data.train_batch_size: 16'),
      REWARD.replace('.lower()', '.lower().rstrip(".")'),
      '2025-03-02T09:00:00Z',
    );
    const diffs = diffProvenance(a, b);
    assert.deepEqual(
      diffs.map(({ diff: _d, ...d }) => d),
      [
        { path: 'overrides.data.train_batch_size', a: 8, b: 16 },
        { path: 'reward.files.exact.py', a: sha256(REWARD), b: sha256(b.rewardText['exact.py']!) },
      ],
    );
    assert.equal(
      diffs[1]!.diff,
      [
        '--- a/exact.py',
        '+++ b/exact.py',
        '@@ -1,3 +1,3 @@',
        ' def compute_score(data_source, solution_str, ground_truth, extra_info=None):',
        '-    pred = solution_str.strip().lower()',
        '+    pred = solution_str.strip().lower().rstrip(".")',
        '     return float(pred == ground_truth)',
        '',
      ].join('\n'),
    );
    const lines = differenceLines(diffs);
    assert.equal(lines[0], 'overrides.data.train_batch_size: 8 → 16');
    assert.match(lines[2]!, /^\n--- a\/exact\.py/);
  });

  it('identical runs: no differences (ids, folders and times are not compared)', () => {
    assert.deepEqual(diffProvenance(side('run-a', SPEC, REWARD), side('run-b', SPEC, REWARD, '2025-04-01T00:00:00Z')), []);
  });

  it('data, environment and judges by path', () => {
    const a = side('run-a', SPEC, REWARD);
    const b = side('run-b', SPEC, REWARD);
    const m = b.manifest as Provenance;
    m.data[0] = { ...m.data[0]!, sha256: sha256('other rows'), rows: 999 };
    m.environment = {
      ...FACTS.environment,
      packages: { ...(FACTS.environment as { packages: Record<string, string> }).packages, vllm: '0.8.4' },
    } as Provenance['environment'];
    m.judges.judge = { ...m.judges.judge!, temperature: 0.7 };
    m.git = { ...m.git, dirty: true };
    assert.deepEqual(
      diffProvenance(a, b).map((d) => [d.path, d.a, d.b]),
      [
        ['data.train[0].sha256', sha256('rows'), sha256('other rows')],
        ['data.train[0].rows', 1000, 999],
        ['environment.packages.vllm', '0.8.5', '0.8.4'],
        ['git.dirty', false, true],
        ['judges.judge.temperature', 0, 0.7],
      ],
    );
  });

  it('an old run without a manifest still compares, by its spec.yaml and reward files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-old-run-'));
    mkdirSync(join(dir, 'reward'));
    writeFileSync(join(dir, 'spec.yaml'), SPEC.replace('trainer.total_epochs: 1', 'trainer.total_epochs: 2'));
    writeFileSync(join(dir, 'reward/exact.py'), REWARD);
    const host = new LocalHost('local');
    const old = await readRunProvenance(host, runRecord('old-run', { dir }));
    assert.equal(old.note, NO_MANIFEST);
    assert.equal(old.manifest.reward?.main, 'exact.py');
    const now = side('run-a', SPEC, REWARD);
    // Data, model, environment, git, services and judges are not recorded for the old run: not compared.
    assert.deepEqual(
      diffProvenance(old, now).map((d) => [d.path, d.a, d.b]),
      [['overrides.trainer.total_epochs', 2, 1]],
    );
  });
});

describe('provenanceSummary (the Runs view tooltip)', () => {
  it('names data hashes and rows, reward hashes, trainer version and git commit, shortened', () => {
    const p = side('run-a', 'name: x\n', 'def compute_score(): return 1\n');
    p.record.trainerVersion = '0.4.1';
    assert.deepEqual(provenanceSummary(p), [
      `data.train: sha256 ${sha256('rows').slice(0, 12)}, rows 1000`,
      `reward exact.py: sha256 ${sha256('def compute_score(): return 1\n').slice(0, 12)}`,
      'trainer: 0.4.1',
      `git: ${'a'.repeat(12)}`,
    ]);
  });
});

describe('unifiedDiff', () => {
  it('is empty for the same lines, and counts a file added from nothing as diff -u does', () => {
    assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', 'a/x', 'b/x'), '');
    assert.equal(unifiedDiff('', 'x\ny\n', 'a/x', 'b/x'), '--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+x\n+y\n');
  });
});
