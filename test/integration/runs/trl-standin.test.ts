import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSpecSchema } from '../../../src/core/runs/run-spec';
import { trlTrainer } from '../../../src/core/runs/trl-trainer';
import { STANDINS } from './run-fixture';

/**
 * The TRL stand-in against the launch lines MedRL builds, and against what real TRL 1.10 refuses (each refusal below was
 * seen on the real one on an H100: exit 1 "Couldn't find any data file at", exit 2 "unrecognized arguments", exit 1
 * "Could not load reward function").
 */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'trl-standin-'));
  const rows = [
    ['Does aspirin prevent a first myocardial infarction?', 'maybe'],
    ['Is metformin first-line in type 2 diabetes?', 'yes'],
  ];
  writeFileSync(
    join(dir, 'grpo.jsonl'),
    rows.map(([q, a]) => JSON.stringify({ prompt: [{ role: 'user', content: q }], solution: a })).join('\n') + '\n',
  );
  writeFileSync(join(dir, 'qa.json'), JSON.stringify(rows.map(([q, a]) => ({ question: q, answer: a }))));
  mkdirSync(join(dir, 'reward'));
  // Records the keywords TRL passes, then scores like an exact-match reward.
  writeFileSync(
    join(dir, 'reward/seen.py'),
    [
      'import json, os',
      'def exact(prompts, completions, solution, **kwargs):',
      '    with open(os.environ["SEEN"], "w") as f:',
      '        json.dump({"kwargs": sorted(kwargs), "step": kwargs["trainer_state"].global_step, "solution": solution, "completion": completions[0]}, f)',
      '    return [1.0 if s in c[0]["content"] else 0.0 for c, s in zip(completions, solution)]',
      '',
    ].join('\n'),
  );
  return dir;
}

function standIn(dir: string, argv: string[], env: Record<string, string> = {}) {
  const r = spawnSync('python3', [join(STANDINS, 'bin/trl'), ...argv], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, MEDRL_STANDIN_STEP_SECONDS: '0', MEDRL_STANDIN_STEPS: '2', PYTHONPATH: join(dir, 'reward'), ...env },
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('TRL stand-in: takes what real TRL takes, refuses what it refuses', () => {
  it("runs MedRL's GRPO launch (data file through the generated --config), calls the reward with TRL's keywords, logs transformers 5 strings and saves like TRL", () => {
    const dir = workspace();
    const spec = runSpecSchema.parse({
      name: 'g',
      framework: 'trl',
      algorithm: 'grpo',
      host: 'h',
      model: 'Qwen/Qwen2.5-0.5B',
      data: { train: join(dir, 'grpo.jsonl') },
      reward: { path: 'reward/seen.py', function: 'exact' },
      resources: { gpusPerNode: 1 },
      overrides: { num_generations: 2, logging_steps: 1, accelerate_config: 'zero3' },
    });
    const cmd = trlTrainer.command({ spec, id: 'r1', dir, dirs: { home: dir, workdir: dir }, rewardFile: join(dir, 'reward/seen.py') });
    for (const [name, text] of Object.entries(cmd.files ?? {})) writeFileSync(join(dir, name), text);
    assert.equal(cmd.argv[0], 'trl');
    const r = standIn(dir, cmd.argv.slice(1), { SEEN: join(dir, 'seen.json') });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^\{'loss': '[\d.]+', .*'rewards\/exact\/mean': '[\d.]+'/m);
    const seen = JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')) as {
      kwargs: string[];
      step: number;
      solution: string[];
      completion: unknown;
    };
    assert.deepEqual(
      seen.kwargs,
      ['completion_ids', 'log_extra', 'log_metric', 'trainer_state'],
      "every column but prompt (solution is a named parameter here), and TRL's own keywords",
    );
    assert.equal(seen.step, 2);
    assert.equal(seen.solution.length, 4, 'one reference per completion: 2 prompts × num_generations 2');
    assert.ok(seen.solution[0] === seen.solution[1] && ['yes', 'maybe'].includes(seen.solution[0]!), "a group shares its row's reference");
    assert.equal((seen.completion as { role: string }[])[0]!.role, 'assistant', 'conversational prompts get conversational completions');
    assert.equal(
      (r.out.match(/Writing model shards: 100%\|█+\| 1\/1 /g) ?? []).length,
      2,
      'a bar for the checkpoint and one for the final model',
    );
    assert.match(r.out, /✅ Training completed\.\n[\s\S]*💾 Model saved to /);
    const state = JSON.parse(readFileSync(join(dir, 'output/checkpoint-2/trainer_state.json'), 'utf8')) as {
      log_history: { step: number }[];
    };
    assert.deepEqual(
      state.log_history.map((h) => h.step),
      [1, 2],
    );
    assert.ok(existsSync(join(dir, 'output/config.json')), 'the final model in output_dir, where stage 2 starts from');
  });

  it("refuses one data file as --dataset_name, an unknown flag, a reward name that is neither built in nor dotted, rows without the trainer's columns", () => {
    const dir = workspace();
    const file = standIn(dir, ['sft', '--model_name_or_path', 'm', '--dataset_name', join(dir, 'qa.json'), '--output_dir', 'o']);
    assert.equal(file.code, 1);
    assert.match(
      file.out,
      new RegExp(`FileNotFoundError: Couldn't find any data file at ${join(dir, 'qa.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.`),
    );
    const flag = standIn(dir, ['sft', '--model_name_or_path', 'm', '--dataset_name', dir, '--output_dir', 'o', '--no_such_flag', '1']);
    assert.equal(flag.code, 2);
    assert.match(flag.out, /Accelerate launch command: error: unrecognized arguments: --no_such_flag/);
    const reward = standIn(dir, [
      'grpo',
      '--model_name_or_path',
      'm',
      '--dataset_name',
      dir,
      '--output_dir',
      'o',
      '--reward_funcs',
      'FreedomIntelligence/medical_o1_verifier_3B',
    ]);
    assert.equal(reward.code, 1);
    assert.match(
      reward.out,
      /ValueError: Could not load reward function 'FreedomIntelligence\/medical_o1_verifier_3B'\. Expected one of \['accuracy_reward'/,
    );
    writeFileSync(join(dir, 'raw.jsonl'), '{"question": "q", "answer": "a"}\n');
    writeFileSync(
      join(dir, 'cfg.yaml'),
      JSON.stringify({ datasets: [{ path: 'json', data_files: join(dir, 'raw.jsonl'), split: 'train' }] }),
    );
    const rows = standIn(dir, [
      'grpo',
      '--model_name_or_path',
      'm',
      '--config',
      'cfg.yaml',
      '--output_dir',
      'o',
      '--reward_funcs',
      'accuracy_reward',
    ]);
    assert.equal(rows.code, 1);
    assert.match(rows.out, /trl grpo needs the column\(s\) prompt; the rows have \['answer', 'question'\]/);
  });
});
