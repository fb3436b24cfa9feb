import type { RewardSample } from '../scoring/sample';
import type { Episode } from './episode';

/** An episode as the sample its reward function was called with in training (verl's dump keeps no extra_info). */
export function episodeSample(ep: Episode): RewardSample {
  return {
    data_source: ep.dataSource ?? '',
    solution_str: ep.raw.response,
    ground_truth: ep.groundTruth ?? null,
    extra_info: ep.extra.extra_info ?? null,
    prompt: ep.raw.prompt,
    ...(ep.score === null ? {} : { trainingScore: ep.score }),
  };
}
