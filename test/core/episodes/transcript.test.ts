import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitTranscript, splitParts, detectTemplate } from '../../../src/core/episodes/transcript';

const roles = (turns: { role: string }[]) => turns.map((t) => t.role);

describe('splitTranscript', () => {
  it('reads a multi-turn ChatML agent episode as a conversation: tool calls, tool responses (as the tool), think blocks', () => {
    const prompt = '<|im_start|>system\nYou are a diagnostic agent.<|im_end|>\n<|im_start|>user\nFever and cough.<|im_end|>\n<|im_start|>assistant\n';
    const response = '<think>Pneumonia?</think>\n<tool_call>\n{"name": "order_exam", "arguments": {"exam": "cxr"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nRLL consolidation\n</tool_response><|im_end|>\n<|im_start|>assistant\n<answer>Pneumonia</answer>';
    const turns = splitTranscript(prompt, response);
    assert.deepEqual(roles(turns), ['system', 'user', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(turns[2]!.parts.map((p) => p.kind), ['think', 'tool_call']);
    assert.equal(turns[2]!.parts[0]!.text, 'Pneumonia?');
    assert.match(turns[2]!.parts[1]!.text, /"order_exam"/);
    assert.deepEqual(turns[3]!.parts, [{ kind: 'tool_response', text: 'RLL consolidation' }]);
    assert.equal(turns[4]!.content, '<answer>Pneumonia</answer>');
  });

  it('reads Llama 3 headers and Mistral [INST] blocks', () => {
    const llama = splitTranscript('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nQT risk?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n', 'Torsades.<|eot_id|>');
    assert.deepEqual(llama.map((t) => [t.role, t.content]), [['system', 'Be brief.'], ['user', 'QT risk?'], ['assistant', 'Torsades.']]);
    const mistral = splitTranscript('<s>[INST] Chest pain after a flight? [/INST]', ' Pulmonary embolism.</s>[INST] Next test? [/INST] CT pulmonary angiography');
    assert.deepEqual(mistral.map((t) => [t.role, t.content]), [['user', 'Chest pain after a flight?'], ['assistant', 'Pulmonary embolism.'], ['user', 'Next test?'], ['assistant', 'CT pulmonary angiography']]);
  });

  it('keeps an empty answer as an empty assistant turn, and plain text as user + assistant', () => {
    const empty = splitTranscript('<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n', '');
    assert.deepEqual(roles(empty), ['user', 'assistant']);
    assert.equal(empty[1]!.content, '');
    assert.deepEqual(splitTranscript('What is 2+2?', '4').map((t) => [t.role, t.content]), [['user', 'What is 2+2?'], ['assistant', '4']]);
    assert.equal(detectTemplate('no markers'), 'plain');
  });

  it('marks a block cut off before its closing tag, and a Qwen3 response that only closes </think>', () => {
    assert.deepEqual(splitParts('<think>The CURB-65 score is'), [{ kind: 'think', text: 'The CURB-65 score is', unclosed: true }]);
    assert.deepEqual(splitParts('reasoning here</think>\nfinal'), [{ kind: 'think', text: 'reasoning here' }, { kind: 'text', text: 'final' }]);
  });
});
