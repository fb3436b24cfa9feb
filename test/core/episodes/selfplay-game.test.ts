import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { verlRecord } from '../../../src/core/episodes/records';
import { labelGameTurns } from '../../../src/core/episodes/selfplay-game';
import type { Turn } from '../../../src/core/episodes/episode';

/** A turn's heading as the replay prints it (webview/replay/episode-view.ts): `role · name`, then ` · environment`. */
const heading = (t: Turn) => `${t.role}${t.name ? ` · ${t.name}` : ''}${t.environment && t.role !== 'tool' ? ' · environment' : ''}`;
const shown = (turns: Turn[]) => turns.map((t) => `${heading(t)}: ${t.content.split('\n')[0]}`);

const NOTE = 'A 67-year-old man with chest pain. ECG shows ST elevation in II, III and aVF. Diagnosis: inferior STEMI.';
const ATTACKED = 'A 67-year-old man with chest pain. ECG shows ST elevation in II, III and aVF. Diagnosis: anterior STEMI.';

/** A verl dump line as `_dump_generations` writes it: ChatML decoded with skip_special_tokens=True, the reward's extra keys. */
function record(input: string, output: string, extra: Record<string, unknown>) {
  return verlRecord({ input, output, score: 1, step: 5, ...extra });
}

const attackerPrompt =
  'system\nYou are the attacker. Change one sentence of the note so that it holds a clinically plausible error.\n' +
  `user\nRewrite the note with one error.\nNote:\n${NOTE}\nassistant\n`;

describe('MEDEC self-play games in the replay', () => {
  it("an attacker sample: the policy's move is the attacker's, the assessor's verdict is the opponent's (environment)", () => {
    const r = record(
      attackerPrompt,
      `<think>\nSwap the territory.\n</think>\n\n${ATTACKED}\nuser\nAssessor: The note has an error: "anterior STEMI" should be "inferior STEMI".\n`,
      { game_role: 'attacker', game_mode: 'adversarial_harmful', attack_valid: 1.0 },
    );
    assert.deepEqual(shown(r.turns()), [
      'system: You are the attacker. Change one sentence of the note so that it holds a clinically plausible error.',
      'user: Rewrite the note with one error.',
      'assistant · attacker: <think>',
      'user · assessor · environment: Assessor: The note has an error: "anterior STEMI" should be "inferior STEMI".',
    ]);
    // The move is the attacker's reply alone; the verdict after it is not part of it.
    assert.deepEqual(
      r.turns()[2]!.parts.map((p) => [p.kind, p.text]),
      [
        ['think', 'Swap the territory.'],
        ['text', ATTACKED],
      ],
    );
    // The same game with the special tokens kept reads the same.
    const kept = record(
      '<|im_start|>system\nYou are the attacker. Change one sentence of the note so that it holds a clinically plausible error.<|im_end|>\n' +
        `<|im_start|>user\nRewrite the note with one error.\nNote:\n${NOTE}<|im_end|>\n<|im_start|>assistant\n`,
      `<think>\nSwap the territory.\n</think>\n\n${ATTACKED}<|im_end|>\n<|im_start|>user\nAssessor: The note has an error: "anterior STEMI" should be "inferior STEMI".<|im_end|>\n`,
      { game_role: 'attacker', game_mode: 'adversarial_harmful', attack_valid: 1.0 },
    );
    assert.deepEqual(shown(kept.turns()), shown(r.turns()));
  });

  it('an attacker sample whose move the referee refused: the environment turn is the referee, no assessor played', () => {
    const r = record(
      attackerPrompt,
      `${NOTE} Also, the patient is 3 years old.\nuser\nReferee: the edit changes more than one sentence.\n`,
      {
        game_role: 'attacker',
        game_mode: 'adversarial_benign',
        attack_valid: 0.0,
      },
    );
    assert.deepEqual(
      r.turns().map((t) => [t.role, t.name, t.environment ?? false]),
      [
        ['system', undefined, false],
        ['user', undefined, false],
        ['assistant', 'attacker', false],
        ['user', 'referee', true],
      ],
    );
    assert.equal(heading(r.turns()[3]!), 'user · referee · environment');
  });

  it("an assessor sample of an adversarial game with a legal attack: the note it judged is the attacker's", () => {
    const r = record(
      `system\nYou are the assessor. Say whether the note holds an error, which sentence, and correct it.\nuser\nDoes this note hold an error?\nNote:\n${ATTACKED}\nassistant\n`,
      'Error: yes. Sentence 3: "Diagnosis: anterior STEMI." Correction: "Diagnosis: inferior STEMI."',
      { game_role: 'assessor', game_mode: 'adversarial_harmful', attack_valid: 1 },
    );
    assert.deepEqual(shown(r.turns()), [
      'system: You are the assessor. Say whether the note holds an error, which sentence, and correct it.',
      "user · attacker's note: Does this note hold an error?",
      'assistant · assessor: Error: yes. Sentence 3: "Diagnosis: anterior STEMI." Correction: "Diagnosis: inferior STEMI."',
    ]);
    assert.ok(r.turns().every((t) => !t.environment));
  });

  it("an assessor sample of a vanilla game (no attack, attack_valid 1): the note is the dataset's, not the attacker's", () => {
    const r = record(`user\nDoes this note hold an error?\nNote:\n${NOTE}\nassistant\n`, 'Error: no.', {
      game_role: 'assessor',
      game_mode: 'vanilla_benign',
      attack_valid: 1.0,
    });
    assert.deepEqual(shown(r.turns()), ['user: Does this note hold an error?', 'assistant · assessor: Error: no.']);
    // Nor when the attack was refused: the assessor judged the original note.
    const refused = record(`user\nDoes this note hold an error?\nNote:\n${NOTE}\nassistant\n`, 'Error: no.', {
      game_role: 'assessor',
      game_mode: 'adversarial_benign',
      attack_valid: 0.0,
    });
    assert.equal(refused.turns()[0]!.name, undefined);
  });

  it('a record with no game_role (or another value) keeps its turns as the transcript has them; tool names are kept', () => {
    const input = 'system\nYou are a diagnostic agent.\nuser\nFever and cough.\nassistant\n';
    const output = 'Order a chest X-ray.\nuser\nHere is the test result: RLL consolidation\nassistant\nPneumonia';
    const plain = record(input, output, { acc: 1 });
    assert.deepEqual(shown(plain.turns()), [
      'system: You are a diagnostic agent.',
      'user: Fever and cough.',
      'assistant: Order a chest X-ray.',
      'user · environment: Here is the test result: RLL consolidation',
      'assistant: Pneumonia',
    ]);
    assert.deepEqual(shown(record(input, output, { game_role: 'judge' }).turns()), shown(plain.turns()));
    // A name the transcript already gives (a tool's) is not replaced by the game's.
    const tool: Turn = { role: 'tool', name: 'lookup_guideline', content: 'STEMI: PCI within 90 min', parts: [], environment: true };
    assert.deepEqual(labelGameTurns([tool], { game_role: 'attacker' }), [tool]);
  });
});
