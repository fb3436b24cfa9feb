import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { ResolvedHost } from '../../../src/core/config/workspace-config';
import type { Host } from '../../../src/core/remote/host';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import type { RunSpec } from '../../../src/core/runs/run-spec';
import { listRuns, type RunInfo } from '../../../src/core/runs/list-runs';
import { submitRun, type SubmitRequest } from '../../../src/core/runs/submit-run';
import type { RunState } from '../../../src/core/runs/run-record';
import { shellQuote } from '../../../src/core/remote/shell-quote';
import { startSshd, type SshdFixture } from '../fixtures/sshd';

export const ROOT = join(__dirname, '../../..');
export const STANDINS = join(ROOT, 'standins');

/** verl's own code on this machine (scripts/setup-verl-check.sh): its sources, Hydra with its grammar, a venv with its imports. */
export const VERL_SOURCES = process.env.MEDRL_VERL_SOURCES ?? join(ROOT, '..', 'shared', 'verl');
export const VERL_PYTHON = join(ROOT, '.tools', 'verl-venv', 'bin', 'python');
export const VERL_PYLIBS = join(ROOT, '.tools', 'verl-pylibs');

/**
 * The host setup that puts the stand-in trainers first (as the demo's local host does). Where verl's own code is set up,
 * the verl stand-in runs it on every launch line before it trains (verl 0.7.0, the stand-in's version): a stand-in run
 * refuses what that verl refuses (test/integration/runs/verl-code.test.ts says what runs).
 */
export const STANDIN_SETUP = [
  `export PATH=${shellQuote(join(STANDINS, 'bin'))}:"$PATH"`,
  `export PYTHONPATH=${shellQuote(STANDINS)}\${PYTHONPATH:+:$PYTHONPATH}`,
  ...(existsSync(VERL_PYTHON)
    ? [
        `export MEDRL_STANDIN_VERL_CODE=${shellQuote(
          JSON.stringify({ python: VERL_PYTHON, verl_root: join(VERL_SOURCES, 'versions', 'v0.7.0'), pylibs: VERL_PYLIBS }),
        )}`,
      ]
    : []),
];

/** PubMedQA-shaped verl rows (a few real questions' shape), as JSONL beside a parquet file the stand-in cannot read. */
const ROWS = [
  ['Do mitochondria play a role in remodelling lace plant leaves during programmed cell death?', 'yes'],
  ['Is there a correlation between bone density and periodontal disease in postmenopausal women?', 'maybe'],
  ['Does hormone therapy reduce the risk of colon cancer?', 'no'],
  ['Is the Charlson index associated with 1-year mortality after hip fracture?', 'yes'],
].map(([q, a], i) => ({
  data_source: 'pubmedqa',
  prompt: [{ role: 'user', content: q }],
  ability: 'medical',
  reward_model: { style: 'rule', ground_truth: a },
  extra_info: { split: 'train', index: i },
}));

export interface Workspace {
  dir: string;
  runsDir: string;
  hostConfig: ResolvedHost;
}

/** A workspace with data (parquet + sibling JSONL, JSON), a TRL-style reward, the example configs, and a runs folder. */
export function makeWorkspace(runsDir?: string): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-runs-ws-'));
  mkdirSync(join(dir, 'data'), { recursive: true });
  mkdirSync(join(dir, 'configs/rewards'), { recursive: true });
  const jsonl = ROWS.map((r) => JSON.stringify(r)).join('\n') + '\n';
  for (const stem of ['train', 'test']) {
    writeFileSync(join(dir, `data/${stem}.parquet`), 'PAR1 stand-in test file, rows in the sibling JSONL PAR1');
    writeFileSync(join(dir, `data/${stem}.jsonl`), jsonl);
  }
  writeFileSync(
    join(dir, 'data/sft.json'),
    JSON.stringify(ROWS.map((r) => ({ question: r.prompt[0]!.content, answer: r.reward_model.ground_truth }))),
  );
  // TRL rows as `medrl dataset convert` writes them: what each trl command reads (the TRL stand-in refuses other rows).
  mkdirSync(join(dir, 'data/trl'));
  const trlRows = (f: (r: (typeof ROWS)[number], answer: string) => object) =>
    ROWS.map((r) => JSON.stringify(f(r, String(r.reward_model.ground_truth)))).join('\n') + '\n';
  writeFileSync(
    join(dir, 'data/trl/sft.jsonl'),
    trlRows((r, a) => ({ prompt: r.prompt, completion: [{ role: 'assistant', content: a }] })),
  );
  writeFileSync(
    join(dir, 'data/trl/grpo.jsonl'),
    trlRows((r, a) => ({ prompt: r.prompt, solution: a })),
  );
  writeFileSync(
    join(dir, 'data/trl/dpo.jsonl'),
    trlRows((r, a) => ({
      prompt: r.prompt,
      chosen: [{ role: 'assistant', content: a }],
      rejected: [{ role: 'assistant', content: 'I cannot tell.' }],
    })),
  );
  copyFileSync(join(ROOT, 'configs/rewards/multiple_choice_exact.py'), join(dir, 'configs/rewards/multiple_choice_exact.py'));
  // The DiagAgent and MEDEC specs' agent loops and the module they share, uploaded with their runs.
  mkdirSync(join(dir, 'configs/agents'));
  for (const f of readdirSync(join(ROOT, 'configs/agents')).filter((n) => n.endsWith('.py')))
    copyFileSync(join(ROOT, 'configs/agents', f), join(dir, 'configs/agents', f));
  writeFileSync(
    join(dir, 'configs/rewards/trl_exact.py'),
    'def exact(prompts, completions, solution, **kwargs):\n    return [1.0 if s in c[0]["content"] else 0.0 for c, s in zip(completions, solution)]\n',
  );
  const runs = runsDir ?? join(dir, 'runs');
  return {
    dir,
    runsDir: runs,
    hostConfig: { name: 'local', kind: 'local', runsDir: runs, setup: STANDIN_SETUP, env: {}, scheduler: 'ssh' },
  };
}

/**
 * An example spec from configs/ made runnable here: on `local` with no GPU, data from the workspace, the stand-in at a
 * fast pace. Everything else (algorithm, LoRA, rollout, services, overrides) is the example's own.
 */
export function adaptExample(file: string, ws: Workspace, changes: Record<string, unknown> = {}): { spec: RunSpec; text: string } {
  const doc = parseDocument(readFileSync(join(ROOT, 'configs', file), 'utf8'));
  const framework = doc.get('framework') as string;
  doc.set('host', 'local');
  doc.delete('setup');
  doc.delete('workdir');
  doc.setIn(['resources', 'gpusPerNode'], 0);
  doc.setIn(['resources', 'nodes'], 1);
  // The test's one Slurm node has 2 CPUs and no RealMemory: what the seeds ask of a GPU node cannot be allocated there.
  if (doc.hasIn(['resources', 'cpusPerTask'])) doc.setIn(['resources', 'cpusPerTask'], 1);
  doc.deleteIn(['resources', 'memory']);
  doc.setIn(['data', 'train'], framework === 'trl' ? `data/trl/${String(doc.get('algorithm'))}.jsonl` : 'data/train.parquet');
  // TRL logs every 10 steps by default; the stand-in runs 4.
  if (framework === 'trl' && !doc.hasIn(['overrides', 'logging_steps'])) doc.setIn(['overrides', 'logging_steps'], 1);
  if (doc.hasIn(['data', 'val'])) doc.setIn(['data', 'val'], 'data/test.parquet');
  if (doc.hasIn(['reward', 'path']))
    doc.setIn(['reward', 'path'], framework === 'trl' ? 'configs/rewards/trl_exact.py' : 'configs/rewards/multiple_choice_exact.py');
  if (doc.hasIn(['reward', 'function']) && framework === 'trl') doc.setIn(['reward', 'function'], 'exact');
  // A base model given as a path must exist on the host (the checks look): a folder in the workspace stands in for it.
  if (/^(\/|~|\.\.?\/)/.test(String(doc.get('model')))) {
    mkdirSync(join(ws.dir, 'models/base'), { recursive: true });
    doc.set('model', './models/base');
  }
  doc.setIn(['env', 'MEDRL_STANDIN_STEP_SECONDS'], '0.05');
  doc.setIn(['env', 'MEDRL_STANDIN_STEPS'], '4');
  for (const [k, v] of Object.entries(changes)) doc.setIn(k.split('.'), v);
  const text = doc.toString();
  const loaded = parseRunSpec(text, file);
  if (!loaded.spec) throw new Error(`${file}: ${JSON.stringify(loaded.problems)}`);
  return { spec: loaded.spec, text };
}

export function request(ws: Workspace, host: Host, spec: RunSpec, text: string, extra: Partial<SubmitRequest> = {}): SubmitRequest {
  return {
    spec,
    specText: text,
    specFile: join(ws.dir, 'configs/spec.yaml'),
    workspaceRoot: ws.dir,
    host,
    hostConfig: ws.hostConfig,
    ...extra,
  };
}

/** Polls the listing (one round trip each time) until the run is in one of the states. */
export async function waitForState(host: Host, runsDir: string, id: string, states: RunState[], timeoutMs = 30_000): Promise<RunInfo> {
  const deadline = Date.now() + timeoutMs;
  let last: RunInfo | undefined;
  for (;;) {
    last = (await listRuns(host, runsDir)).runs.find((r) => r.record.id === id);
    if (last && states.includes(last.state)) return last;
    if (Date.now() > deadline)
      throw new Error(
        `run ${id} did not reach ${states.join('|')} in ${timeoutMs} ms: ${JSON.stringify(last && { state: last.state, reason: last.reason, tail: last.logTail.slice(-1500) })}`,
      );
    await new Promise((r) => setTimeout(r, 150));
  }
}

export { submitRun };

/** A real sshd on loopback, a host on it, and a workspace whose runs go to `~/.medrl/runs` there with the stand-ins' setup. */
export async function loopbackRuns(): Promise<{ sshd: SshdFixture; host: Host; ws: Workspace }> {
  const sshd = await startSshd();
  const host = sshd.makeHost({ name: 'loopback' });
  const ws = makeWorkspace('~/.medrl/runs');
  ws.hostConfig = {
    name: 'loopback',
    kind: 'ssh',
    sshAlias: sshd.alias,
    runsDir: '~/.medrl/runs',
    setup: STANDIN_SETUP,
    env: {},
    scheduler: 'ssh',
  };
  return { sshd, host, ws };
}
