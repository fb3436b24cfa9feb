import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunInfo } from '../../../src/core/runs/list-runs';
import type { RunState } from '../../../src/core/runs/run-record';
import { runPickItems } from '../../../src/core/runs/run-pick';

function run(id: string, created: string, state: RunState, host: string, extra: Partial<RunInfo> = {}): RunInfo {
  return {
    host,
    record: {
      id,
      name: `name-${id}`,
      kind: 'train',
      framework: 'verl',
      algorithm: 'grpo',
      host,
      scheduler: 'ssh',
      created,
      dir: `/runs/${id}`,
    },
    state,
    logSize: 0,
    logTail: '',
    progress: { metrics: [] },
    ...extra,
  };
}

describe('runPickItems: the runs a quick pick offers', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');

  it('lists the newest run first, whatever host it is on; a run whose created time cannot be read goes last', () => {
    const items = runPickItems(
      [
        run('a', '2025-03-01T09:00:00Z', 'succeeded', 'local'),
        run('b', 'not a date', 'lost', 'local'),
        run('c', '2025-03-01T11:00:00Z', 'running', 'gpubox'),
        run('d', '2025-02-28T23:00:00Z', 'cancelled', 'gpubox'),
      ],
      now,
    );
    assert.deepEqual(
      items.map((i) => i.run.record.id),
      ['c', 'a', 'd', 'b'],
    );
  });

  it('labels each with its name, `state · host`, and its step and time so far when known', () => {
    const [running, failed] = runPickItems(
      [
        run('r', '2025-03-01T11:58:00Z', 'running', 'gpubox', {
          progress: { step: 7, totalSteps: 20, metrics: [{ id: 'reward', title: 'Reward', key: 'critic/score/mean', value: 0.4567 }] },
        }),
        run('f', '2025-03-01T10:00:00Z', 'failed', 'local', { exitCode: 3, ended: '2025-03-01T10:00:42Z' }),
      ],
      now,
    );
    assert.deepEqual(
      { label: running!.label, description: running!.description, detail: running!.detail },
      { label: 'name-r', description: 'running · gpubox', detail: 'step 7/20 · reward 0.457 · 2m 00s' },
    );
    assert.deepEqual(
      { label: failed!.label, description: failed!.description, detail: failed!.detail },
      { label: 'name-f', description: 'failed (exit 3) · local', detail: '42s' },
    );
  });

  it('has no detail when neither the step nor the time is known', () => {
    const [item] = runPickItems([run('q', 'never', 'succeeded', 'local')], now);
    assert.equal(item!.detail, undefined);
    assert.equal(item!.description, 'succeeded · local');
  });
});
