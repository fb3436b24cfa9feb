/** A chat message, as in verl's `prompt` column and TRL's conversational datasets. */
export interface ChatMessage {
  role: string;
  content: string;
}

/**
 * One sample a reward function scores, in verl's terms (`compute_score(data_source, solution_str, ground_truth, extra_info)`).
 * TRL functions get `prompt` and `solution_str` as `prompts`/`completions`, and the other fields and `extra` as columns.
 */
export interface RewardSample {
  data_source: string;
  solution_str: string;
  ground_truth: unknown;
  extra_info?: unknown;
  prompt?: string | ChatMessage[];
  /** Other columns of the row, passed as keyword arguments the function accepts. */
  extra?: Record<string, unknown>;
  /** The score this sample got in training (rollout dumps), for back-tests. */
  trainingScore?: number;
  /** The score a person marked as right (regression cases). */
  expected?: number;
}

/** What scoring one sample gave, by a function or a judge. */
export interface ScoreResult {
  index: number;
  score: number | null;
  /** The dict a verl function returned (extra keys such as `pred`), or the parsed judge answer. */
  detail: Record<string, unknown> | null;
  error: string | null;
  traceback?: string | null;
  stdout?: string;
  stderr?: string;
  /** The judge's raw answer, always kept. */
  raw?: string;
  latencyMs: number;
  /** Judge requests made (retries included). */
  attempts?: number;
  cached?: boolean;
}
