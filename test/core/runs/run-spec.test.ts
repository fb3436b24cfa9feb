import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldPosition, parseYamlWithSchema } from '../../../src/core/config/yaml-document';
import { formatProblem } from '../../../src/core/errors/located-error';
import { runSpecSchema } from '../../../src/core/runs/run-spec';

const configs = join(__dirname, '../../../configs');

describe('run specs', () => {
  const files = readdirSync(configs).filter((f) => f.endsWith('.yaml'));
  it('configs/ ships a spec for each workflow and the local demo', () => {
    assert.ok(files.length >= 6, files.join(', '));
    const specs = files.map((f) => parseYamlWithSchema(readFileSync(join(configs, f), 'utf8'), runSpecSchema, f).value!);
    assert.ok(
      specs.some((s) => s?.framework === 'verl' && s.services?.judge && s.services.exam_simulator),
      'diagnostic agent with judge + exam simulator',
    );
    assert.ok(
      specs.some((s) => s?.framework === 'trl' && s.algorithm === 'sft'),
      'doctor SFT',
    );
    assert.ok(
      specs.some((s) => s?.framework === 'trl' && s.reward && 'path' in s.reward && s.reward.path.endsWith('medical_verifier.py')),
      "doctor RL rewarded by the verifier (a reward function: its protocol is not TRL's reward-model scoring)",
    );
    assert.ok(
      specs.some((s) => s?.lora && s.scheduler === 'ray'),
      'ECG QA LoRA on Ray',
    );
    assert.ok(
      specs.some((s) => s?.host === 'local'),
      'local demo',
    );
  });
  for (const f of files) {
    it(`${f} is valid`, () => {
      const r = parseYamlWithSchema(readFileSync(join(configs, f), 'utf8'), runSpecSchema, f);
      assert.deepEqual(r.problems, []);
      assert.ok(r.value);
    });
  }

  it('reports cross-field errors where they are', () => {
    const text = 'name: x\nframework: verl\nalgorithm: dpo\nmodel: m\ndata: {train: t.parquet}\n';
    const r = parseYamlWithSchema(text, runSpecSchema, 'x.yaml');
    assert.equal(r.value, undefined);
    const algo = r.problems.find((p) => p.field === 'algorithm');
    assert.equal(algo?.line, 3);
    assert.match(algo!.message, /TRL/);
  });

  it('grpo needs a reward; a missing field points at its parent', () => {
    const r = parseYamlWithSchema(
      'name: x\nframework: verl\nalgorithm: grpo\nmodel: m\ndata:\n  val: v.parquet\n',
      runSpecSchema,
      'x.yaml',
    );
    assert.equal(r.value, undefined);
    const train = r.problems.find((p) => p.field === 'data.train');
    assert.equal(train?.line, 5, JSON.stringify(r.problems));
    assert.equal(formatProblem(train!), 'x.yaml:5:1 (data.train): error: missing: expected text or a list');
  });

  it('a wrong item of a list is named by its index, where it is', () => {
    const r = parseYamlWithSchema(
      'name: x\nframework: verl\nalgorithm: sft\nmodel: m\ndata: {train: t.parquet}\nsetup:\n  - source venv/bin/activate\n  - 3.5\n',
      runSpecSchema,
      'x.yaml',
    );
    assert.deepEqual(r.problems.map(formatProblem), ['x.yaml:8:5 (setup[1]): error: must be text (got 3.5)']);
    assert.deepEqual(fieldPosition('setup:\n  - a\n  - b\n', 'setup[1]'), { line: 3, column: 5 });
  });
});
