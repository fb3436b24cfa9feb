import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import { verlTrainer } from '../../../src/core/runs/verl-trainer';
import { rewardUpload } from '../../../src/core/runs/reward-files';
import { ROOT, STANDINS } from './run-fixture';
import { VERL_PYLIBS, VERL_PYTHON, VERL_SOURCES } from './verl-code';

/** What standins/verl_agent_loop_check.py answers: the episode verl's agent-loop classes produced. */
export interface LoopAnswer<Extra = Record<string, unknown>> {
  version: string;
  prompt: string;
  response: string;
  segments: Array<{ mask: number; text: string }>;
  num_turns: number;
  extra_fields: Extra;
  generate_calls: number;
}

export interface LaunchLine {
  overrides: string[];
  agentDir: string;
}

/**
 * A shipped spec's launch line for `source`'s verl (a folder of ../shared/verl/versions), with its agent loop and the
 * files it imports written where the line points, and the tiny policy in place of the spec's model.
 */
export async function agentLaunchLine(specFile: string, source: string, tmp: string, tiny: string): Promise<LaunchLine> {
  const spec = parseRunSpec(readFileSync(specFile, 'utf8'), specFile).spec!;
  const dir = join(tmp, `run-${basename(specFile, '.yaml')}-${source}`);
  const upload = await rewardUpload(ROOT, spec.rollout!.agentLoop!.path, specFile, 'rollout.agentLoop.path');
  const cmd = verlTrainer.command({
    spec,
    id: 'agent-loop',
    dir,
    dirs: { home: tmp, workdir: tmp },
    rewardFile: posix.join(dir, 'reward', 'path' in spec.reward! ? basename(spec.reward.path) : 'reward.py'),
    agentLoopFile: posix.join(dir, 'agent', upload.main),
    version: source === 'main' ? '0.10.0.dev' : source.slice(1),
  });
  const files = {
    ...upload.files,
    ...Object.fromEntries(Object.entries(cmd.files ?? {}).map(([k, v]) => [k.slice('agent/'.length), v])),
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'agent', name)), { recursive: true });
    writeFileSync(join(dir, 'agent', name), text);
  }
  assert.ok(cmd.pythonPath?.split(':').includes(join(dir, 'agent')), `the agent loop's folder is on PYTHONPATH: ${cmd.pythonPath}`);
  const overrides = cmd.argv
    .slice(cmd.argv.indexOf('verl.trainer.main_ppo') + 1)
    .map((a) => (a.startsWith('actor_rollout_ref.model.path=') ? `actor_rollout_ref.model.path=${join(tiny, 'policy')}` : a));
  return { overrides, agentDir: join(dir, 'agent') };
}

/** Runs the launch line's agent loop with verl's own classes on one dataset row, the policy answering `replies` in order. */
export function runAgentLoop<Extra>(
  source: string,
  line: LaunchLine,
  tiny: string,
  sample: Record<string, unknown>,
  replies: string[],
  env: Record<string, string> = {},
): LoopAnswer<Extra> {
  const req = {
    verl_root: join(VERL_SOURCES, 'versions', source),
    pylibs: VERL_PYLIBS,
    overrides: line.overrides,
    agent_name: 'medrl_agent_loop',
    tokenizer: join(tiny, 'policy'),
    paths: [line.agentDir],
    replies,
    sample,
  };
  const r = spawnSync(VERL_PYTHON, [join(STANDINS, 'verl_agent_loop_check.py')], {
    input: JSON.stringify(req),
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, ...env },
  });
  assert.equal(r.status, 0, `verl_agent_loop_check.py on ${source}: ${r.stderr.slice(-3000)}`);
  return JSON.parse(r.stdout) as LoopAnswer<Extra>;
}
