import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A workspace whose medrl.yaml lists `data/` as a dataset root, holding `data/clinic.jsonl`: three verl RL rows whose user
 * prompt is `prompt(i)` (and `extraInfo`, when given): the clinical text the PHI tests plant identifiers in.
 */
export function clinicWorkspace(prefix: string, prompt: (i: number) => string, extraInfo?: Record<string, string>): string {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(ws, 'medrl.yaml'), 'version: 1\nhosts:\n  local: {}\ndatasets:\n  - path: data\n');
  mkdirSync(join(ws, 'data'));
  const rows = [0, 1, 2].map((i) =>
    JSON.stringify({
      data_source: 'clinic',
      prompt: [{ role: 'user', content: prompt(i) }],
      ability: 'medical',
      reward_model: { style: 'rule', ground_truth: 'yes' },
      ...(extraInfo ? { extra_info: extraInfo } : {}),
    }),
  );
  writeFileSync(join(ws, 'data/clinic.jsonl'), `${rows.join('\n')}\n`);
  return ws;
}
