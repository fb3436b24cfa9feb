import { join } from 'node:path';
import type { Host } from '../remote/host';
import { rowAndLine } from '../format/row-line';
import { openDataset } from '../datasets/open-dataset';
import { convertDataset, type ConvertOptions } from '../datasets/convert-dataset';
import { writeConverted } from '../datasets/write-dataset';

/** How the demo's training files are made from the real samples: the recipes a user would type into the convert form. */
const DEMO_CONVERSIONS: { input: string; out: string; options: ConvertOptions }[] = [
  {
    input: 'data/pubmedqa/ori_pqal-first200.json',
    out: 'data/pubmedqa/verl',
    options: {
      format: 'verl',
      split: 0.9,
      seed: 42,
      mapping: {
        question: 'QUESTION',
        answer: 'final_decision',
        id: '_key',
        dataSourceName: 'pubmedqa',
        abilityName: 'medical',
        template:
          'Read the abstract and answer the research question with yes, no or maybe.\n\nAbstract:\n{CONTEXTS}\n\nQuestion: {QUESTION}\n\n' +
          'Think briefly, then give your final answer as <answer>yes</answer>, <answer>no</answer> or <answer>maybe</answer>.',
        extra: [],
      },
    },
  },
  {
    input: 'data/medec/medec-ms-validation-first200.csv',
    out: 'data/medec/verl',
    options: {
      format: 'verl',
      split: 0.9,
      seed: 42,
      mapping: {
        question: 'Sentences',
        answer: 'Error Flag',
        id: 'Text ID',
        dataSourceName: 'medec',
        abilityName: 'medical-error-detection',
        template:
          'The clinical note below has one sentence per line, each starting with its id. It is either correct or contains exactly one ' +
          'medical error (diagnosis, management, treatment, pharmacotherapy or causal organism).\n\n{Sentences}\n\n' +
          'Answer <answer>1</answer> if the note contains an error, else <answer>0</answer>. If it does, also give the id of the wrong ' +
          'sentence and its correction.',
        extra: ['Error Type', 'Error Sentence ID', 'Error Sentence', 'Corrected Sentence'],
      },
    },
  },
];

/** Converts the demo samples under `dir` (the demo workspace or the package's demo/ folder) into verl parquet + JSONL twins. */
export async function writeDemoDatasets(host: Host, dir: string, outDir: string = dir): Promise<string[]> {
  const written: string[] = [];
  for (const c of DEMO_CONVERSIONS) {
    const result = await convertDataset(await openDataset(host, join(dir, c.input)), c.options);
    if (result.problems.length)
      throw new Error(
        `${c.input}: ${result.problems.length} row(s) could not be converted; first: ${rowAndLine(result.problems[0]!)}: ${result.problems[0]!.reason}`,
      );
    written.push(...(await writeConverted(host, result, { out: join(outDir, c.out), split: true, jsonlTwin: true })));
  }
  return written;
}
