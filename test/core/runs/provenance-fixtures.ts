import { sha256, type HostFacts, type JudgeUse } from '../../../src/core/runs/provenance';
import type { RunRecord } from '../../../src/core/runs/run-record';

/** The run spec, host facts and run record the provenance, re-run and change-point tests build their runs from. */

export const SPEC = `name: pubmedqa-grpo
framework: verl
algorithm: grpo
model: /models/qwen
data:
  train: data/train.parquet
reward:
  path: rewards/exact.py
overrides:
  data.train_batch_size: 8
  trainer.total_epochs: 1
`;

export const FACTS: HostFacts = {
  data: [
    {
      field: 'data.train',
      path: '/ws/data/train.parquet',
      size: 152548,
      mtime: '2025-03-01T10:00:00Z',
      sha256: sha256('rows'),
      hashed: 'sha256 of the file',
      rows: 1000,
      rowsFrom: 'parquet footer',
    },
  ],
  model: { spec: '/models/qwen', path: '/models/qwen', configSha256: sha256('{}') },
  environment: {
    python: '3.11.7',
    executable: '/venv/bin/python3',
    packages: { torch: '2.6.0+cu124', verl: '0.4.1', vllm: '0.8.5' },
    gpuCount: 8,
    gpuNames: Array(8).fill('NVIDIA H100 80GB HBM3'),
    driver: '550.54.15',
    cuda: '12.4',
  },
  git: { workdir: '/ws', commit: 'a'.repeat(40), dirty: false },
};

export function runRecord(id: string, o: { dir?: string; created?: string } = {}): RunRecord {
  return {
    id,
    name: 'pubmedqa-grpo',
    kind: 'train',
    framework: 'verl',
    algorithm: 'grpo',
    host: 'gpu1',
    scheduler: 'ssh',
    created: o.created ?? '2025-03-01T10:00:00Z',
    dir: o.dir ?? `/runs/${id}`,
  };
}

/** The judge the runs call (`judges.judge` of their manifest), with the model given. */
export function judgeUse(model = 'Qwen2.5-72B-Instruct'): JudgeUse {
  return {
    judge: 'qwen72',
    host: 'gpu2',
    model,
    url: 'http://gpu2:8000/v1',
    promptSha256: sha256('prompt'),
    parser: 'json:score',
    temperature: 0,
    seed: 1,
    maxTokens: null,
  };
}
