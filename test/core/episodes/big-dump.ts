import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * Writes a verl rollout dump of about `bytes` bytes: GRPO groups of 8 ChatML prompts with think/answer responses of
 * varied length and score, extra reward keys, like `trainer.rollout_data_dir` writes. Returns the number of episodes.
 */
export function writeBigDump(path: string, bytes: number, step = 100): number {
  const lines: string[] = [];
  for (let g = 0; g < 64; g++) {
    const input = `<|im_start|>system\nYou are a diagnostic agent.<|im_end|>\n<|im_start|>user\nCase ${g}: ${'a 58-year-old with dyspnoea, orthopnoea and ankle oedema; BNP 1450 pg/mL. '.repeat(8 + (g % 5))}<|im_end|>\n<|im_start|>assistant\n`;
    for (let k = 0; k < 8; k++) {
      const right = (g + k) % 3 === 0;
      const output = `<think>${'Consider heart failure versus renal causes; the BNP is high. '.repeat(10 + ((g * 8 + k) % 40))}</think>\n<answer>${right ? 'heart failure' : 'nephrotic syndrome'}</answer>`;
      lines.push(
        JSON.stringify({
          input,
          output,
          gts: 'heart failure',
          score: right ? 1 : 0,
          step,
          data_source: g % 2 ? 'diagagent' : 'medec',
          acc: right,
          pred: right ? 'heart failure' : 'nephrotic syndrome',
        }),
      );
    }
  }
  const block = Buffer.from(lines.join('\n') + '\n');
  const fd = openSync(path, 'w');
  let written = 0;
  let episodes = 0;
  try {
    while (written < bytes) {
      writeSync(fd, block);
      written += block.length;
      episodes += lines.length;
    }
  } finally {
    closeSync(fd);
  }
  return episodes;
}
