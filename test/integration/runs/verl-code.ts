import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VERL_PYLIBS, VERL_PYTHON, VERL_SOURCES } from './run-fixture';

/**
 * verl's own code on this machine (scripts/setup-verl-check.sh prepares it): the verl sources of shared/verl/versions,
 * Hydra with its grammar generated, and a venv with verl's imports. Missing pieces fail the tests that need them, with
 * the command that prepares them: a verl check that silently did not run would prove nothing.
 */
export { VERL_PYLIBS, VERL_PYTHON, VERL_SOURCES };
export const VERL_CHECK = join(ROOT, 'standins', 'verl_code_check.py');

export function verlCodeMissing(): string | undefined {
  for (const [what, path] of [
    ['the verl sources (shared/verl/versions)', join(VERL_SOURCES, 'versions')],
    ['the venv with verl imports', VERL_PYTHON],
    ['Hydra with its generated grammar', join(VERL_PYLIBS, 'hydra', 'grammar', 'gen', 'OverrideParser.py')],
  ])
    if (!existsSync(path!)) return `${what} missing at ${path}: run bash scripts/setup-verl-check.sh`;
  return undefined;
}

/** A tiny random Qwen2 policy and its tokenizer, built offline (test/gpu/make_tiny_models.py): verl 0.7+ reads the model's config. */
export function tinyModels(): string {
  const out = mkdtempSync(join(tmpdir(), 'medrl-verl-tiny-'));
  const r = spawnSync(VERL_PYTHON, [join(ROOT, 'test', 'gpu', 'make_tiny_models.py'), out], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`make_tiny_models.py exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return out;
}

export interface VerlCase {
  name: string;
  overrides: string[];
  reward_rows?: Array<{ data_source: string; solution_str: string; ground_truth: unknown; extra_info?: unknown }>;
  dataset?: string[];
  tokenizer?: string;
}

export interface VerlVerdict {
  name: string;
  refused: boolean;
  stage: string | null;
  message: string | null;
  notes: string[];
  ran: string[];
  scores?: number[];
  dataset?: { rows: number; keys: string[]; input_ids: number | null };
}

/** Runs verl_code_check.py on one verl source tree (one process: the cases share verl's import). */
export function runVerlCode(
  source: string,
  req: { cases?: VerlCase[]; keys?: boolean },
): { version: string; cases: VerlVerdict[]; keys?: string[] } {
  const r = spawnSync(VERL_PYTHON, [VERL_CHECK], {
    input: JSON.stringify({ verl_root: join(VERL_SOURCES, 'versions', source), pylibs: VERL_PYLIBS, ...req }),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`verl_code_check.py on ${source} exited ${r.status}: ${r.stderr.slice(-3000)}`);
  return JSON.parse(r.stdout) as { version: string; cases: VerlVerdict[]; keys?: string[] };
}
