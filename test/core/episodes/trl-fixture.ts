import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';

/**
 * TRL's `prompt` column is the chat-templated prompt decoded with special tokens removed (trl 1.10 grpo_trainer.py:
 * `batch_decode(prompt_ids, skip_special_tokens=True)`): Qwen's `<|im_start|>`/`<|im_end|>` are gone, the role words stay.
 */
const PROMPTS = [
  'system\nYou are a careful clinician.\nuser\nA 72-year-old with new confusion and a sodium of 118 mmol/L. Most likely cause?\nassistant\n',
  'user\nWhich ECG finding suggests hyperkalaemia?\nassistant\n',
];

/**
 * Writes what TRL's `log_completions` writes (trainer-formats.md): `completions/completions_{step:05d}.parquet` with
 * step, prompt, completion, one column per reward function, advantage. Groups of 4 completions per prompt.
 */
export function writeTrlCompletions(outputDir: string, steps: number[]): string {
  const dir = join(outputDir, 'completions');
  mkdirSync(dir, { recursive: true });
  for (const step of steps) {
    const rows = PROMPTS.flatMap((prompt, p) =>
      [0, 1, 2, 3].map((k) => {
        const right = (k + step + p) % 2 === 0;
        const completion = right
          ? `<think>Step ${step}, try ${k}.</think>\n<answer>${p ? 'peaked T waves' : 'SIADH'}</answer>`
          : `<think>Unsure at step ${step}.</think>\n<answer>dehydration</answer>`;
        return { step, prompt, completion, accuracy_reward: right ? 1 : 0, format_reward: 0.5 };
      }),
    );
    const groupMean = (i: number) => {
      const g = Math.floor(i / 4) * 4;
      return rows.slice(g, g + 4).reduce((a, r) => a + r.accuracy_reward + r.format_reward, 0) / 4;
    };
    const buf = parquetWriteBuffer({
      columnData: [
        { name: 'step', data: rows.map((r) => r.step), type: 'INT32' },
        { name: 'prompt', data: rows.map((r) => r.prompt), type: 'STRING' },
        { name: 'completion', data: rows.map((r) => r.completion), type: 'STRING' },
        { name: 'accuracy_reward', data: rows.map((r) => r.accuracy_reward), type: 'DOUBLE' },
        { name: 'format_reward', data: rows.map((r) => r.format_reward), type: 'DOUBLE' },
        { name: 'advantage', data: rows.map((r, i) => r.accuracy_reward + r.format_reward - groupMean(i)), type: 'DOUBLE' },
      ],
    });
    writeFileSync(join(dir, `completions_${String(step).padStart(5, '0')}.parquet`), new Uint8Array(buf));
  }
  return dir;
}
