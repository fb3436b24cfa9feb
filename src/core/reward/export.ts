import type { RewardSample, ScoreResult } from '../scoring/sample';
import { csvCell } from '../format/csv-cell';

interface ExportSide {
  label: string;
  results: Array<ScoreResult | undefined>;
}

/** One row per sample: the sample, its expected score, then score / error / raw answer / latency per scorer. */
export function resultsCsv(samples: RewardSample[], sides: ExportSide[]): string {
  const header = [
    'index',
    'data_source',
    'solution_str',
    'ground_truth',
    'expected',
    ...sides.flatMap((s) => [`${s.label} score`, `${s.label} error`, `${s.label} raw`, `${s.label} latency_ms`]),
  ];
  const rows = samples.map((sample, i) =>
    [
      i,
      sample.data_source,
      sample.solution_str,
      sample.ground_truth,
      sample.expected,
      ...sides.flatMap((s) => {
        const r = s.results[i];
        return [r?.score, r?.error, r?.raw, r ? Math.round(r.latencyMs) : undefined];
      }),
    ]
      .map(csvCell)
      .join(','),
  );
  return `${[header.map(csvCell).join(','), ...rows].join('\n')}\n`;
}

/** One JSON object per sample: the sample and every scorer's full result. */
export function resultsJsonl(samples: RewardSample[], sides: ExportSide[]): string {
  return (
    samples
      .map((sample, i) =>
        JSON.stringify({ index: i, sample, results: Object.fromEntries(sides.map((s) => [s.label, s.results[i] ?? null])) }),
      )
      .join('\n') + '\n'
  );
}
