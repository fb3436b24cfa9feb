import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SshdFixture } from '../fixtures/sshd';
import type { Host } from '../../../src/core/remote/host';
import { HostPool } from '../../../src/core/remote/host-pool';
import { workspaceConfigSchema, workspaceHosts } from '../../../src/core/config/workspace-config';
import { provenanceSchema } from '../../../src/core/runs/provenance';
import { readRunProvenance } from '../../../src/core/runs/read-provenance';
import { RerunRefused, rerunExactly } from '../../../src/core/submit/rerun-exactly';
import { environmentSecrets } from '../../../src/core/submit/run-environment';
import { loopbackRuns, STANDIN_SETUP, adaptExample, request, submitRun, waitForState, type Workspace } from './run-fixture';

describe('re-run exactly on an SSH host (a real sshd on loopback) with the stand-in trainers', () => {
  let sshd: SshdFixture;
  let host: Host;
  let ws: Workspace;
  before(async () => ({ sshd, host, ws } = await loopbackRuns()));
  after(async () => {
    await host.dispose();
    await sshd.stop();
  });

  it("re-runs a run whose host is unchanged; refuses, writing nothing, once a data file and the workdir's git state changed", async (t) => {
    const git = (...args: string[]) => execFileSync('git', ['-C', ws.dir, ...args], { encoding: 'utf8' }).trim();
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-qm', 'workspace');
    const { spec, text } = adaptExample('local-demo.yaml', ws, { workdir: ws.dir });
    const { record } = await submitRun(request(ws, host, spec, text));
    await waitForState(host, '~/.medrl/runs', record.id, ['succeeded', 'failed', 'lost'], 60_000);

    const config = workspaceConfigSchema.parse({
      version: 1,
      hosts: { loopback: { ssh: sshd.alias, runsDir: '~/.medrl/runs', setup: STANDIN_SETUP } },
      defaults: { host: 'loopback' },
    });
    const pool = new HostPool(
      () => workspaceHosts(config),
      async () => host,
    );
    const rerun = async () =>
      rerunExactly({
        then: await readRunProvenance(host, record),
        config,
        workspaceRoot: ws.dir,
        pool,
        secrets: environmentSecrets({}),
      });

    const started = Date.now();
    const again = await rerun();
    t.diagnostic(`a re-run over SSH (host checks, reward contract, measuring, compare, submit): ${Date.now() - started} ms`);
    assert.deepEqual(again.rerunOf, { id: record.id, host: 'loopback' });
    const m = provenanceSchema.parse(JSON.parse(readFileSync(join(again.record.dir, 'provenance.json'), 'utf8')));
    assert.deepEqual(m.rerunOf, { id: record.id, host: 'loopback' });
    assert.equal(m.git.commit, git('rev-parse', 'HEAD'));
    await waitForState(host, '~/.medrl/runs', again.record.id, ['succeeded', 'failed', 'lost'], 60_000);

    // data.val changes on the host (a tracked file: the workdir is dirty now too).
    appendFileSync(join(ws.dir, 'data/test.parquet'), 'one more line\n');
    const runs = join(sshd.remoteHome, '.medrl/runs');
    const folders = readdirSync(runs).length;
    const err = await rerun().then(
      () => assert.fail('the re-run was not refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RerunRefused, String(err));
    assert.deepEqual(
      err.differences.map((d) => d.path),
      ['data.val[0].size', 'data.val[0].sha256', 'git.dirty'],
    );
    assert.deepEqual(err.differences.map((d) => [d.a, d.b]).at(-1), [false, true]);
    assert.equal(readdirSync(runs).length, folders);
    await pool.dispose();
  });
});
