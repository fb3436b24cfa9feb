import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { expecting, fieldPath, plainIssues, plainZodError } from '../../../src/core/errors/plain-zod';

/** The problems a person reads: "field: message", one a line. */
function problems(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value, { error: plainZodError });
  return r.success ? [] : plainIssues(r.error.issues).map((i) => `${fieldPath(i.path)}: ${i.message}`);
}

describe('zod issues in plain words', () => {
  const message = expecting(z.object({ role: z.enum(['user', 'assistant']), content: z.string() }), 'a chat message ({role, content})');
  const messages = expecting(z.array(message), 'a list of chat messages ({role, content})');
  const schema = z.object({
    prompt: messages,
    answer: expecting(z.union([z.string(), messages]), 'text or a list of chat messages ({role, content})'),
    steps: z.int(),
    reward_model: z.object({ style: z.string(), ground_truth: z.unknown() }),
  });

  it('a missing field says what should be there, from the schema', () => {
    assert.deepEqual(problems(schema, {}), [
      'prompt: missing: expected a list of chat messages ({role, content})',
      'answer: missing: expected text or a list of chat messages ({role, content})',
      'steps: missing: expected a number',
      'reward_model: missing: expected a mapping with style, ground_truth',
    ]);
  });

  it('a missing field inside a nested list is named by its path, prompt[1].content', () => {
    const value = {
      prompt: [{ role: 'user', content: 'q' }, { role: 'assistant' }],
      answer: [{ content: 'a' }],
      steps: 3,
      reward_model: { style: 'rule' },
    };
    assert.deepEqual(problems(schema, value), [
      'prompt[1].content: missing: expected text',
      // The list form of the union fits: its own problem stands, not "must be text or a list (got a list)".
      'answer[0].role: missing: expected one of user, assistant',
      'reward_model.ground_truth: missing: expected a value',
    ]);
  });

  it('a wrong type says what was expected and what it got', () => {
    assert.deepEqual(
      problems(schema, { prompt: 'What is the dose?', answer: 7, steps: 1.5, reward_model: { style: 'rule', ground_truth: 'x' } }),
      [
        'prompt: must be a list of chat messages ({role, content}) (got "What is the dose?")',
        'answer: must be text or a list of chat messages ({role, content}) (got 7)',
        'steps: must be a whole number (got 1.5)',
      ],
    );
    assert.deepEqual(problems(schema.shape.prompt, [{ role: 'robot', content: 'x' }, 'hi']), [
      '[0].role: must be one of user, assistant (got "robot")',
      '[1]: must be a chat message ({role, content}) (got "hi")',
    ]);
  });

  it("never shows zod's own words", () => {
    const all = [...problems(schema, {}), ...problems(schema, { prompt: [{}], answer: {}, steps: 'x', reward_model: [] })].join('\n');
    assert.doesNotMatch(all, /nonoptional|received|Invalid input/);
  });
});
