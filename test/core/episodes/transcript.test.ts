import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitTranscript, splitParts, detectTemplate } from '../../../src/core/episodes/transcript';

const roles = (turns: { role: string }[]) => turns.map((t) => t.role);
/** Each turn as a line: its role (marked when the environment speaks) and its text. */
const said = (turns: { role: string; environment?: boolean; content: string }[]) =>
  turns.map((t) => `${t.role}${t.environment ? ' (environment)' : ''}: ${t.content}`);

describe('splitTranscript', () => {
  it('reads a multi-turn ChatML agent episode as a conversation: tool calls, tool responses (as the tool), think blocks', () => {
    const prompt =
      '<|im_start|>system\nYou are a diagnostic agent.<|im_end|>\n<|im_start|>user\nFever and cough.<|im_end|>\n<|im_start|>assistant\n';
    const response =
      '<think>Pneumonia?</think>\n<tool_call>\n{"name": "order_exam", "arguments": {"exam": "cxr"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nRLL consolidation\n</tool_response><|im_end|>\n<|im_start|>assistant\n<answer>Pneumonia</answer>';
    const turns = splitTranscript(prompt, response);
    assert.deepEqual(roles(turns), ['system', 'user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(
      turns[2]!.parts.map((p) => p.kind),
      ['think', 'tool_call'],
    );
    assert.equal(turns[2]!.parts[0]!.text, 'Pneumonia?');
    assert.match(turns[2]!.parts[1]!.text, /"order_exam"/);
    assert.deepEqual(turns[3]!.parts, [{ kind: 'tool_response', text: 'RLL consolidation' }]);
    assert.equal(turns[4]!.content, '<answer>Pneumonia</answer>');
    // The tool's answer came from the environment, inside the response; the prompt's user turn did not.
    assert.deepEqual(
      turns.map((t) => t.environment ?? false),
      [false, false, false, true, false],
    );
  });

  it("marks the exam simulator's answers in a response as the environment's, with special tokens kept or removed", () => {
    const chatml = splitTranscript(
      '<|im_start|>user\nChest pain.<|im_end|>\n<|im_start|>assistant\n',
      'Order: troponin.<|im_end|>\n<|im_start|>user\nHere is the test result: troponin 2.1<|im_end|>\n<|im_start|>assistant\nDiagnosis: NSTEMI',
    );
    const stripped = splitTranscript(
      'user\nChest pain.\nassistant\n',
      'Order: troponin.\nuser\nHere is the test result: troponin 2.1\nassistant\nDiagnosis: NSTEMI',
    );
    for (const turns of [chatml, stripped])
      assert.deepEqual(said(turns), [
        'user: Chest pain.',
        'assistant: Order: troponin.',
        'user (environment): Here is the test result: troponin 2.1',
        'assistant: Diagnosis: NSTEMI',
      ]);
  });

  it('splits a stripped-token conversation written with CRLF line ends into the same turns', () => {
    const turns = splitTranscript(
      'system\r\nBe brief.\r\nuser\r\nChest pain.\r\nassistant\r\n',
      'Order: troponin.\r\nuser\r\nHere is the test result: troponin 2.1\r\nassistant\r\nDiagnosis: NSTEMI',
    );
    assert.deepEqual(said(turns), [
      'system: Be brief.',
      'user: Chest pain.',
      'assistant: Order: troponin.',
      'user (environment): Here is the test result: troponin 2.1',
      'assistant: Diagnosis: NSTEMI',
    ]);
  });

  it('reads Llama 3 headers and Mistral [INST] blocks', () => {
    const llama = splitTranscript(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nQT risk?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
      'Torsades.<|eot_id|>',
    );
    assert.deepEqual(
      llama.map((t) => [t.role, t.content]),
      [
        ['system', 'Be brief.'],
        ['user', 'QT risk?'],
        ['assistant', 'Torsades.'],
      ],
    );
    const mistral = splitTranscript(
      '<s>[INST] Chest pain after a flight? [/INST]',
      ' Pulmonary embolism.</s>[INST] Next test? [/INST] CT pulmonary angiography',
    );
    assert.deepEqual(
      mistral.map((t) => [t.role, t.content]),
      [
        ['user', 'Chest pain after a flight?'],
        ['assistant', 'Pulmonary embolism.'],
        ['user', 'Next test?'],
        ['assistant', 'CT pulmonary angiography'],
      ],
    );
  });

  it('keeps an empty answer as an empty assistant turn, and plain text as user + assistant', () => {
    const empty = splitTranscript('<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n', '');
    assert.deepEqual(roles(empty), ['user', 'assistant']);
    assert.equal(empty[1]!.content, '');
    assert.deepEqual(
      splitTranscript('What is 2+2?', '4').map((t) => [t.role, t.content]),
      [
        ['user', 'What is 2+2?'],
        ['assistant', '4'],
      ],
    );
    assert.equal(detectTemplate('no markers'), 'plain');
  });

  it('a ChatML conversation decoded with special tokens removed (verl dumps, TRL completions): clean turns from the role lines', () => {
    // What Qwen2.5's template gives once skip_special_tokens=True has removed <|im_start|> and <|im_end|>.
    const prompt =
      'system\nYou are a careful physician.\nuser\nA 54-year-old with chest pain radiating to the left arm.\nWhat next?\nassistant\n';
    const turns = splitTranscript(prompt, 'ECG and troponin.');
    assert.deepEqual(
      turns.map((t) => [t.role, t.content]),
      [
        ['system', 'You are a careful physician.'],
        ['user', 'A 54-year-old with chest pain radiating to the left arm.\nWhat next?'],
        ['assistant', 'ECG and troponin.'],
      ],
    );
    // The same conversation with the special tokens kept reads the same.
    const kept = splitTranscript(
      '<|im_start|>system\nYou are a careful physician.<|im_end|>\n<|im_start|>user\nA 54-year-old with chest pain radiating to the left arm.\nWhat next?<|im_end|>\n<|im_start|>assistant\n',
      'ECG and troponin.<|im_end|>',
    );
    assert.deepEqual(
      kept.map((t) => [t.role, t.content]),
      turns.map((t) => [t.role, t.content]),
    );
  });

  it('special tokens removed: the word "user" or "assistant" inside a message, or alone on a line in it, does not split it', () => {
    const prompt = 'user\nThe user reports that the assistant at the clinic\nuser\nsaid rest. Which assistant role?\nassistant\n';
    const turns = splitTranscript(prompt, 'assistant\nA physician assistant.');
    assert.deepEqual(
      turns.map((t) => [t.role, t.content]),
      [
        ['user', 'The user reports that the assistant at the clinic\nuser\nsaid rest. Which assistant role?'],
        ['assistant', 'assistant\nA physician assistant.'],
      ],
    );
    // "assistant" alone on a line inside the user's message: the prompt must still end with the user speaking.
    const inside = splitTranscript('user\nWho answers?\nassistant\nthe nurse\nassistant\n', 'The nurse.');
    assert.deepEqual(
      inside.map((t) => t.role),
      ['user', 'assistant'],
    );
    assert.equal(inside[0]!.content, 'Who answers?\nassistant\nthe nurse');
    // Text that only starts with a role word but has no generation prompt is plain text.
    assert.deepEqual(
      splitTranscript('user\nfeedback: fine', 'ok').map((t) => [t.role, t.content]),
      [
        ['user', 'user\nfeedback: fine'],
        ['assistant', 'ok'],
      ],
    );
  });

  it("special tokens removed, multi-turn: the response's tool answers and later assistant turns are split too", () => {
    const prompt = 'system\nYou are a diagnostic agent.\nuser\nFever and cough.\nassistant\n';
    const response =
      '<tool_call>\n{"name": "order_exam", "arguments": {"exam": "cxr"}}\n</tool_call>\nuser\n<tool_response>\nRLL consolidation\n</tool_response>\nassistant\n<answer>Pneumonia</answer>';
    const turns = splitTranscript(prompt, response);
    assert.deepEqual(
      turns.map((t) => t.role),
      ['system', 'user', 'assistant', 'tool', 'assistant'],
    );
    assert.deepEqual(turns[3]!.parts, [{ kind: 'tool_response', text: 'RLL consolidation' }]);
    assert.equal(turns[4]!.content, '<answer>Pneumonia</answer>');
    // Qwen3 with thinking off: the generation prompt carries an empty think block.
    assert.deepEqual(
      splitTranscript('user\nQ?\nassistant\n<think>\n\n</think>\n\n', 'A.').map((t) => [t.role, t.content]),
      [
        ['user', 'Q?'],
        ['assistant', '<think>\n\n</think>\n\nA.'],
      ],
    );
  });

  it('marks a block cut off before its closing tag, and a Qwen3 response that only closes </think>', () => {
    assert.deepEqual(splitParts('<think>The CURB-65 score is'), [{ kind: 'think', text: 'The CURB-65 score is', unclosed: true }]);
    assert.deepEqual(splitParts('reasoning here</think>\nfinal'), [
      { kind: 'think', text: 'reasoning here' },
      { kind: 'text', text: 'final' },
    ]);
  });
});
