import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProvenance, provenanceSchema, sha256, type HostFacts, type Provenance } from '../../../src/core/runs/provenance';
import { readRunProvenance, type RunProvenance } from '../../../src/core/runs/read-provenance';
import { RerunRefused, rerunDifferences, rerunExactly } from '../../../src/core/submit/rerun-exactly';
import { workspaceConfigSchema, workspaceHosts } from '../../../src/core/config/workspace-config';
import { HostPool } from '../../../src/core/remote/host-pool';
import { LocalHost } from '../../../src/core/remote/local-host';
import { environmentSecrets } from '../../../src/core/submit/run-environment';
import { FACTS, SPEC, runRecord } from '../runs/provenance-fixtures';

const REWARD = 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 1.0\n';

function manifest(id: string, facts: HostFacts, workspace: string, at: string, service = 'svc-1'): Provenance {
  return provenanceSchema.parse(
    buildProvenance({
      id,
      dir: `/runs/${id}`,
      specText: SPEC,
      workspace,
      now: new Date(at),
      reward: { main: 'exact.py', function: 'compute_score', files: { 'exact.py': REWARD } },
      facts,
      uses: {
        services: {
          policy: { host: 'gpu2', engine: 'vllm', model: 'Qwen2.5-7B', servedName: 'policy', url: 'http://gpu2:8000/v1', runId: service },
        },
        judges: {},
      },
    }),
  );
}

/** The run as read back from its folder, with its manifest and spec.yaml. */
function then(): RunProvenance {
  return {
    host: 'gpu1',
    record: runRecord('run-a'),
    manifest: manifest('run-a', FACTS, '/home/me/ws', '2025-03-01T10:00:00Z'),
    rewardText: { 'exact.py': REWARD },
    specText: SPEC,
  };
}

/** What a submit of the same spec measures today, from another laptop, with the service restarted (a new run id). */
function now(facts: HostFacts) {
  return {
    record: { ...runRecord('run-b'), created: '2025-06-01T00:00:00Z' },
    manifest: manifest('run-b', facts, '/Users/colleague/ws', '2025-06-01T00:00:00Z', 'svc-2'),
    rewardText: { 'exact.py': REWARD },
  };
}

describe('rerunDifferences', () => {
  it('the same host facts: nothing differs (who submitted from where, times and a service run id do not count)', () => {
    assert.deepEqual(rerunDifferences(then(), now(FACTS)), []);
  });

  it('a changed data file and package version: exactly those two, as `path: recorded → now`', () => {
    const env = FACTS.environment as Extract<HostFacts['environment'], { packages: unknown }>;
    const facts: HostFacts = {
      ...FACTS,
      data: [{ ...FACTS.data[0]!, sha256: sha256('other rows'), mtime: '2025-05-01T00:00:00Z' }],
      environment: { ...env, packages: { ...env.packages, vllm: '0.9.0' } },
    };
    const diffs = rerunDifferences(then(), now(facts));
    assert.deepEqual(
      diffs.map((d) => [d.path, d.a, d.b]),
      [
        ['data.train[0].sha256', sha256('rows'), sha256('other rows')],
        ['environment.packages.vllm', '0.8.5', '0.9.0'],
      ],
    );
    const refused = new RerunRefused({ id: 'run-a', host: 'gpu1' }, 'gpu1', diffs);
    assert.equal(
      refused.message,
      [
        'run-a was not re-run: 2 things on gpu1 differ from its provenance.json (recorded → now):',
        `  data.train[0].sha256: ${sha256('rows')} → ${sha256('other rows')}`,
        '  environment.packages.vllm: 0.8.5 → 0.9.0',
      ].join('\n'),
    );
  });

  it('another host named on purpose: its name is not a difference, but what it has is', () => {
    const other = now({ ...FACTS, git: { ...FACTS.git, dirty: true } });
    other.record.host = 'gpu3';
    assert.deepEqual(
      rerunDifferences(then(), other).map((d) => d.path),
      ['run.host', 'git.dirty'],
    );
    assert.deepEqual(
      rerunDifferences(then(), other, true).map((d) => d.path),
      ['git.dirty'],
    );
  });
});

describe('rerunExactly refuses before it asks any host', () => {
  const config = workspaceConfigSchema.parse({ version: 1 });
  const request = (p: RunProvenance) => ({
    then: p,
    config,
    workspaceRoot: tmpdir(),
    pool: new HostPool(() => workspaceHosts(config)),
    secrets: environmentSecrets({}),
  });

  it('a run submitted before manifests: says so, and to submit its spec instead', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-old-run-'));
    mkdirSync(join(dir, 'reward'));
    writeFileSync(join(dir, 'spec.yaml'), SPEC);
    writeFileSync(join(dir, 'reward/exact.py'), REWARD);
    const old = await readRunProvenance(new LocalHost('local'), runRecord('old-run', { dir }));
    await assert.rejects(rerunExactly(request(old)), {
      message:
        'run old-run has no provenance.json (submitted before manifests): there is nothing to check the host against; submit its spec instead (Re-run, or medrl submit)',
    });
  });

  it('a spec.yaml edited in the run folder after submit', async () => {
    const edited = { ...then(), specText: SPEC.replace('8', '16') };
    await assert.rejects(rerunExactly(request(edited)), /^Error: gpu1:\/runs\/run-a\/spec\.yaml was changed after run-a was submitted/);
  });
});
