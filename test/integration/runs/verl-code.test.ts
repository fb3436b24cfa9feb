import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunSpec } from '../../../src/core/runs/load-run-spec';
import { runSpecSchema, type RunSpec } from '../../../src/core/runs/run-spec';
import { verlTrainer } from '../../../src/core/runs/verl-trainer';
import { KNOWN_VERL_RELEASES, releaseName } from '../../../src/core/runs/verl-versions';
import { renderNewSpec } from '../../../src/core/runs/new-spec';
import { ROOT } from './run-fixture';
import { LocalHost } from '../../../src/core/remote/local-host';
import { writeDemoDatasets } from '../../../src/core/demo/demo-datasets';
import { VERL_PYLIBS, VERL_PYTHON, VERL_SOURCES, runVerlCode, tinyModels, verlCodeMissing, type VerlVerdict } from './verl-code';

/**
 * The product's checks before submit against verl's own code (standins/verl_code_check.py: Hydra's composition,
 * verl's validation, the sync vLLM rollout's chunked-prefill lines), on every verl release MedRL knows. A row agrees
 * when MedRL refuses exactly where verl refuses, or starts and does less than asked (never saves a checkpoint, trains
 * single-turn, calls a simulator at fixed addresses) and the spec did not say it means that.
 */

const missing = verlCodeMissing();
/** verl 0.7+ reads the model's config while it validates: a real (tiny, random) model folder. */
const MODELS = missing ? '/missing' : tinyModels();

const BASE = {
  name: 'table',
  framework: 'verl',
  algorithm: 'grpo',
  model: join(MODELS, 'policy'),
  data: { train: '/data/train.parquet', val: '/data/test.parquet' },
  reward: { path: 'configs/rewards/multiple_choice_exact.py', function: 'compute_score' },
  rollout: { engine: 'vllm', n: 8 },
  resources: { nodes: 1, gpusPerNode: 8 },
  overrides: {
    'data.train_batch_size': 64,
    'data.max_prompt_length': 1024,
    'data.max_response_length': 1024,
    'trainer.save_freq': 10,
    'trainer.test_freq': 10,
  },
};

type Row = { name: string; spec: RunSpec };

function row(name: string, change: { overrides?: Record<string, unknown>; drop?: string[]; [k: string]: unknown }): Row {
  const { overrides = {}, drop = [], ...rest } = change;
  const o: Record<string, unknown> = { ...BASE.overrides, ...overrides };
  for (const k of drop) delete o[k];
  return { name, spec: runSpecSchema.parse({ ...BASE, ...rest, overrides: o }) };
}

const LONG = { 'data.max_prompt_length': 4096, 'data.max_response_length': 8192, 'data.train_batch_size': 64 };
const TOOL = 'actor_rollout_ref.rollout.multi_turn.tool_config_path';

const ROWS: Row[] = [
  row('good GRPO, 8 GPUs', {}),
  row('unknown key', { overrides: { 'actor_rollout_ref.rollout.not_a_key': 1 } }),
  row('misspelled key (trainer.save_frequency)', { overrides: { 'trainer.save_frequency': 10 } }),
  row('mini batch above train batch', { overrides: { 'actor_rollout_ref.actor.ppo_mini_batch_size': 128 } }),
  row('train batch × n not divisible by 16 GPUs', {
    resources: { nodes: 2, gpusPerNode: 8 },
    rollout: { engine: 'vllm', n: 3 },
    overrides: { 'data.train_batch_size': 5, 'actor_rollout_ref.actor.ppo_mini_batch_size': 5 },
  }),
  row('deprecated actor micro batch key alone', { overrides: { 'actor_rollout_ref.actor.ppo_micro_batch_size': 16 } }),
  row('both actor micro batch keys', {
    overrides: { 'actor_rollout_ref.actor.ppo_micro_batch_size': 16, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 2 },
  }),
  row('both rollout log-prob micro batch keys', {
    overrides: {
      'actor_rollout_ref.rollout.log_prob_micro_batch_size': 16,
      'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': 2,
    },
  }),
  row('KL loss: reference log-prob micro batch filled', { overrides: { 'actor_rollout_ref.actor.use_kl_loss': true } }),
  row('both reference log-prob micro batch keys', {
    overrides: {
      'actor_rollout_ref.actor.use_kl_loss': true,
      'actor_rollout_ref.ref.log_prob_micro_batch_size': 16,
      'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': 2,
    },
  }),
  row('dynamic batch size', { overrides: { 'actor_rollout_ref.actor.use_dynamic_bsz': true } }),
  row('multi-turn without its config', { overrides: { 'actor_rollout_ref.rollout.multi_turn.enable': true } }),
  row('multi-turn with a tool config', {
    overrides: { 'actor_rollout_ref.rollout.multi_turn.enable': true, [TOOL]: '/cfg/tools.yaml' },
  }),
  row('no save_freq: no checkpoint ever saved', { drop: ['trainer.save_freq'] }),
  row('save_freq 0', { overrides: { 'trainer.save_freq': 0 } }),
  row('no save_freq, verl.noCheckpoints: true', { drop: ['trainer.save_freq'], verl: { noCheckpoints: true } }),
  row('4096 + 8192 tokens, chunked prefill', { overrides: LONG }),
  row('4096 + 8192 tokens, max_num_batched_tokens 12288', {
    overrides: { ...LONG, 'actor_rollout_ref.rollout.max_num_batched_tokens': 12288 },
  }),
  row('4096 + 8192 tokens, chunked prefill off', {
    overrides: { ...LONG, 'actor_rollout_ref.rollout.enable_chunked_prefill': false },
  }),
  row('zero GPUs', { resources: { nodes: 1, gpusPerNode: 0 } }),
  row('LoRA, load_format safetensors', {
    lora: { rank: 32, alpha: 64, targetModules: 'all-linear' },
    overrides: { 'actor_rollout_ref.rollout.load_format': 'safetensors' },
  }),
  row('LoRA, default load_format', { lora: { rank: 32, alpha: 64, targetModules: 'all-linear' } }),
  row('PPO with its critic', { algorithm: 'ppo' }),
  row('PPO, critic mini batch above train batch', { algorithm: 'ppo', overrides: { 'critic.ppo_mini_batch_size': 128 } }),
  row('SGLang rollout', { rollout: { engine: 'sglang', n: 8 } }),
  row('reward file given by the old top-level key in overrides', { overrides: { 'custom_reward_function.path': '/home/u/r/other.py' } }),
];

/** The verl specs the product ships, and one `MedRL: New Run Spec` writes. */
function productSpecs(): Row[] {
  const out: Row[] = [];
  for (const f of readdirSync(join(ROOT, 'configs')).filter((x) => x.endsWith('.yaml'))) {
    const { spec } = parseRunSpec(readFileSync(join(ROOT, 'configs', f), 'utf8'), f);
    if (spec?.framework === 'verl') out.push({ name: `configs/${f}`, spec });
  }
  const generated = renderNewSpec({
    name: 'new-grpo',
    framework: 'verl',
    algorithm: 'grpo',
    host: 'gpu',
    model: join(MODELS, 'policy'),
    train: '/data/train.parquet',
    reward: { path: 'configs/rewards/multiple_choice_exact.py', function: 'compute_score' },
  });
  out.push({ name: 'New Run Spec (verl GRPO)', spec: parseRunSpec(generated, 'new.yaml').spec! });
  return out;
}

/** The launch line's Hydra overrides for a release (its version picks the logger, as on a host). */
function overrides(spec: RunSpec, version: string): string[] {
  const dirs = { home: '/home/u', workdir: '/home/u' };
  const cmd = verlTrainer.command({
    spec,
    id: 'table-1',
    dir: '/home/u/.medrl/runs/table-1',
    dirs,
    rewardFile: '/home/u/r/reward.py',
    agentLoopFile: '/home/u/.medrl/runs/table-1/agent/exam_simulator_loop.py',
    version,
  });
  const at = cmd.argv.indexOf('verl.trainer.main_ppo');
  assert.ok(at > 0, `not a main_ppo line: ${cmd.argv.join(' ')}`);
  return cmd.argv.slice(at + 1);
}

function productErrors(spec: RunSpec, version: string): string[] {
  return [...verlTrainer.problems(spec, 'spec.yaml'), ...verlTrainer.versionProblems(version, spec, 'spec.yaml')]
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.field}: ${p.message}`);
}

/** What verl's code says must stop a submit: a refusal, or a note the spec did not say it means. */
function verlStops(v: VerlVerdict, spec: RunSpec): string[] {
  if (v.refused) return [`${v.stage}: ${v.message}`];
  return v.notes.filter((n) => !(n.startsWith('saves no checkpoint') && spec.verl?.noCheckpoints));
}

function cell(v: VerlVerdict, stops: string[]): string {
  if (v.refused) return `refused (${v.stage}): ${(v.message ?? '').slice(0, 90)}`;
  return stops.length
    ? `starts, but ${stops.join('; ').slice(0, 90)}`
    : v.notes.length
      ? `starts (${v.notes.join('; ').slice(0, 60)})`
      : 'starts';
}

describe("verl's own code on every verl launch line", () => {
  const rows = [...ROWS, ...productSpecs()];
  const releases = KNOWN_VERL_RELEASES;
  const results = new Map<string, { version: string; verdicts: VerlVerdict[] }>();

  it('runs on this machine (scripts/setup-verl-check.sh)', () => {
    assert.equal(missing, undefined);
  });

  it(`the launch-line table has at least 20 lines, good and bad (${ROWS.length} + ${rows.length - ROWS.length} specs)`, () => {
    assert.ok(ROWS.length >= 20);
  });

  for (const r of releases) {
    it(`verl ${releaseName(r)}: Hydra's keys are the ones MedRL checks against, and each line's verdict is verl's`, () => {
      assert.equal(missing, undefined);
      const got = runVerlCode(r.source, {
        keys: true,
        cases: rows.map((x) => ({ name: x.name, overrides: overrides(x.spec, r.version) })),
      });
      results.set(r.source, { version: got.version, verdicts: got.cases });
      const shipped = JSON.parse(readFileSync(join(ROOT, 'src/core/runs/verl-config-keys.json'), 'utf8')) as {
        keys: Record<string, number>;
      };
      const ours = Object.keys(shipped.keys).filter((k) => shipped.keys[k]! & (1 << r.index));
      if (process.env.MEDRL_WRITE_VERL_KEYS) writeKeys(r.index, got.keys!);
      else
        assert.deepEqual(
          ours,
          got.keys,
          `src/core/runs/verl-config-keys.json is not verl ${r.version}'s: MEDRL_WRITE_VERL_KEYS=1 node scripts/run-tests.mjs integration verl-code`,
        );
      const disagree: string[] = [];
      rows.forEach((x, i) => {
        const v = got.cases[i]!;
        const stops = verlStops(v, x.spec);
        const ours = productErrors(x.spec, r.version);
        if (stops.length > 0 !== ours.length > 0)
          disagree.push(
            `${x.name}: verl ${stops.length ? `stops (${stops.join('; ')})` : 'starts'}, MedRL ${ours.length ? `refuses (${ours.join('; ')})` : 'submits'}`,
          );
      });
      assert.deepEqual(disagree, [], `MedRL's checks and verl ${r.version}'s code disagree`);
    });
  }

  it('prints the table (spec × verl version: what verl said; "=" where MedRL agrees) and docs/trainers.md keeps it', () => {
    assert.equal(results.size, releases.length, 'every release ran');
    const head = `| launch line | ${releases.map((r) => releaseName(r)).join(' | ')} |`;
    const lines = [head, `| --- | ${releases.map(() => '---').join(' | ')} |`];
    rows.forEach((x, i) => {
      const cells = releases.map((r) => {
        const v = results.get(r.source)!.verdicts[i]!;
        const stops = verlStops(v, x.spec);
        const agree = stops.length > 0 === productErrors(x.spec, r.version).length > 0;
        return `${agree ? '=' : '≠'} ${stops.length ? (v.refused ? `refused (${v.stage})` : 'does less') : 'starts'}`;
      });
      lines.push(`| ${x.name} | ${cells.join(' | ')} |`);
    });
    const table = lines.join('\n');
    console.log(`\nverl's own code, per launch line and release:\n${table}\n`);
    for (const r of releases) {
      const res = results.get(r.source)!;
      console.log(`verl ${releaseName(r)} ran: ${[...new Set(res.verdicts.flatMap((v) => v.ran))].join(', ')}`);
      res.verdicts.forEach((v, i) => {
        const stops = verlStops(v, rows[i]!.spec);
        if (stops.length) console.log(`  ${rows[i]!.name}: ${cell(v, stops)}`);
      });
    }
    const docs = readFileSync(join(ROOT, 'docs/trainers.md'), 'utf8');
    if (process.env.MEDRL_WRITE_VERL_KEYS) {
      const start = docs.indexOf('<!-- verl-code-table -->');
      const end = docs.indexOf('<!-- /verl-code-table -->');
      assert.ok(start >= 0 && end > start, 'docs/trainers.md has the table markers');
      writeFileSync(join(ROOT, 'docs/trainers.md'), `${docs.slice(0, start)}<!-- verl-code-table -->\n${table}\n${docs.slice(end)}`);
    } else
      assert.ok(
        docs.includes(table),
        'docs/trainers.md has this table: MEDRL_WRITE_VERL_KEYS=1 node scripts/run-tests.mjs integration verl-code',
      );
  });
});

describe("the verl stand-in runs verl's own code first (MEDRL_STANDIN_VERL_CODE)", () => {
  it("refuses a launch line with a key verl lacks, with Hydra's words, and trains nothing", () => {
    assert.equal(verlCodeMissing(), undefined);
    const dir = mkdtempSync(join(tmpdir(), 'medrl-standin-verl-code-'));
    const line = overrides(row('unknown key', { overrides: { 'trainer.save_frequency': 10 } }).spec, '0.7.0').map((a) =>
      a.replace('/home/u/.medrl/runs/table-1', dir),
    );
    const r = spawnSync('python3', ['-m', 'verl.trainer.main_ppo', ...line], {
      encoding: 'utf8',
      timeout: 300_000,
      env: {
        ...process.env,
        PYTHONPATH: join(ROOT, 'standins'),
        MEDRL_STANDIN_VERL_CODE: JSON.stringify({
          python: VERL_PYTHON,
          verl_root: join(VERL_SOURCES, 'versions', 'v0.7.0'),
          pylibs: VERL_PYLIBS,
        }),
      },
    });
    assert.notEqual(r.status, 0, r.stdout);
    assert.match(
      r.stderr,
      /verl's own code refused the launch line \(compose\): ConfigCompositionException: Could not override 'trainer.save_frequency'/,
    );
    assert.deepEqual(readdirSync(dir), [], 'no step, rollout or checkpoint written');
  });
});

function writeKeys(index: number, keys: string[]): void {
  const file = join(ROOT, 'src/core/runs/verl-config-keys.json');
  const data = JSON.parse(readFileSync(file, 'utf8')) as { keys: Record<string, number> };
  for (const k of Object.keys(data.keys)) data.keys[k]! &= ~(1 << index);
  for (const k of keys) data.keys[k] = (data.keys[k] ?? 0) | (1 << index);
  for (const k of Object.keys(data.keys)) if (!data.keys[k]) delete data.keys[k];
  data.keys = Object.fromEntries(Object.entries(data.keys).sort(([a], [b]) => (a < b ? -1 : 1)));
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

describe("verl's reward loader and dataset class on rows MedRL's converter wrote", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'medrl-verl-data-'));
  const ready = writeDemoDatasets(new LocalHost('local'), join(ROOT, 'demo'), dataDir);
  type Converted = { data_source: string; reward_model: { ground_truth: unknown }; extra_info: Record<string, unknown> };
  const rowsOf = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Converted);
  /** Two answers per row as verl would decode them: the reference's, and a wrong one. */
  const cases = [
    {
      name: 'PubMedQA, exact answer',
      reward: 'configs/rewards/multiple_choice_exact.py',
      data: 'data/pubmedqa/verl',
      right: (r: Converted) => `The abstract supports it. <answer>${String(r.reward_model.ground_truth)}</answer>`,
      wrong: (r: Converted) => `<answer>${r.reward_model.ground_truth === 'no' ? 'yes' : 'no'}</answer>`,
    },
    {
      name: 'MEDEC, error flag',
      reward: 'configs/rewards/medec_error_detection.py',
      data: 'data/medec/verl',
      right: (r: Converted) => `<answer>${String(r.reward_model.ground_truth)}</answer>`,
      wrong: (r: Converted) => `<answer>${String(r.reward_model.ground_truth) === '1' ? '0' : '1'}</answer>`,
    },
  ];
  for (const r of KNOWN_VERL_RELEASES) {
    it(`verl ${releaseName(r)}: get_custom_reward_fn loads the shipped reward files and RLHFDataset reads the converted parquet`, async () => {
      assert.equal(verlCodeMissing(), undefined);
      await ready;
      const reqs = cases.map((c) => {
        const spec = row(c.name, {
          reward: { path: c.reward, function: 'compute_score' },
          data: { train: join(dataDir, c.data, 'train.parquet'), val: join(dataDir, c.data, 'test.parquet') },
        }).spec;
        const line = overrides(spec, r.version).map((a) =>
          /^(reward\.)?custom_reward_function\.path=/.test(a) ? `${a.slice(0, a.indexOf('='))}=${join(ROOT, c.reward)}` : a,
        );
        const rows = rowsOf(join(dataDir, c.data, 'train.jsonl')).slice(0, 6);
        const reward_rows = rows.flatMap((x) =>
          [c.right(x), c.wrong(x)].map((solution_str) => ({
            data_source: x.data_source,
            solution_str,
            ground_truth: x.reward_model.ground_truth,
            extra_info: x.extra_info,
          })),
        );
        return {
          name: c.name,
          overrides: line,
          reward_rows,
          dataset: [join(dataDir, c.data, 'train.parquet')],
          tokenizer: join(MODELS, 'policy'),
        };
      });
      const got = runVerlCode(r.source, { cases: reqs });
      got.cases.forEach((v, i) => {
        assert.equal(v.refused, false, `${cases[i]!.name}: ${v.stage}: ${v.message}`);
        assert.ok(v.ran.includes('get_custom_reward_fn') && v.ran.includes('RLHFDataset'), v.ran.join());
        const scores = v.scores!;
        for (let k = 0; k < scores.length; k += 2)
          assert.ok(
            scores[k]! > scores[k + 1]!,
            `${cases[i]!.name}: the reference answer outscores a wrong one (${scores[k]} vs ${scores[k + 1]})`,
          );
        const rows = rowsOf(join(dataDir, cases[i]!.data, 'train.jsonl')).length;
        assert.equal(v.dataset!.rows, rows, 'RLHFDataset reads every converted row');
        // Tokenized by the dataset up to 0.6; from 0.7 the agent loop tokenizes the row's raw_prompt.
        assert.ok(v.dataset!.input_ids! > 0 || v.dataset!.keys.includes('raw_prompt'), v.dataset!.keys.join());
      });
    });
  }
});
