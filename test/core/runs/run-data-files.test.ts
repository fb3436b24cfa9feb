import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Host } from '../../../src/core/remote/host';
import type { ResolvedHost } from '../../../src/core/config/workspace-config';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import { runDataFiles, type SubmitRequest } from '../../../src/core/runs/submit-run';

/** A request with only what the data paths depend on: the host's kind and home, the workdirs, the workspace. */
function req(kind: 'local' | 'ssh', spec: Partial<RunSpec>, hostWorkdir?: string): SubmitRequest {
  const host = { kind, name: kind === 'local' ? 'local' : 'gpu', resolvePath: async () => '/home/u' } as unknown as Host;
  return {
    spec: spec as RunSpec,
    specText: '',
    specFile: '/ws/configs/a.yaml',
    workspaceRoot: '/ws',
    host,
    hostConfig: { workdir: hostWorkdir } as ResolvedHost,
  };
}

describe('the data files a run reads, as paths on its host', () => {
  it('train and val, relative ones under the workdir as the trainer sees them', async () => {
    const data = { train: ['data/train.jsonl', '~/shared/extra.parquet'], val: '/data/val.parquet' };
    assert.deepEqual(await runDataFiles(req('local', { data })), [
      '/ws/data/train.jsonl',
      '/home/u/shared/extra.parquet',
      '/data/val.parquet',
    ]);
    assert.deepEqual(await runDataFiles(req('ssh', { data: { train: 'd/t.jsonl' } })), ['/home/u/d/t.jsonl']);
    assert.deepEqual(await runDataFiles(req('ssh', { data: { train: 'd/t.jsonl' } }, '/scratch')), ['/scratch/d/t.jsonl']);
    assert.deepEqual(await runDataFiles(req('ssh', { data: { train: 'd/t.jsonl' }, workdir: '~/w' }, '/scratch')), ['/home/u/w/d/t.jsonl']);
  });
});
