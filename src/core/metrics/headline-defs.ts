/** The headline metrics: which keys carry each of them, per trainer. Shared by the CLI, the runs tree and the dashboard page. */
export const FRAMEWORKS = ['verl', 'trl'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/** One headline chart: what it shows and the metric keys that carry it, per framework, best first. */
export interface HeadlineDef {
  id: 'reward' | 'margin' | 'accuracy' | 'loss' | 'kl' | 'entropy' | 'response_length' | 'validation' | 'step_time' | 'throughput';
  title: string;
  keys: Record<Framework, Array<string | RegExp>>;
}

export const HEADLINES: HeadlineDef[] = [
  // TRL 1.10 keys: GRPO `reward` (trl/trainer/grpo_trainer.py `_metrics[mode]["reward"]`), experimental PPO
  // `objective/scores`; DPO `rewards/margins` and `rewards/accuracies` (dpo_trainer.py), SFT `loss` (transformers) and
  // `mean_token_accuracy` (sft_trainer.py). DPO's `rewards/chosen` alone says little: users read margins and accuracies.
  {
    id: 'reward',
    title: 'Reward',
    keys: { verl: ['critic/score/mean', 'critic/rewards/mean'], trl: ['reward', 'objective/scores', 'objective/rlhf_reward'] },
  },
  { id: 'margin', title: 'Reward margin', keys: { verl: [], trl: ['rewards/margins'] } },
  { id: 'accuracy', title: 'Accuracy', keys: { verl: [], trl: ['rewards/accuracies', 'mean_token_accuracy'] } },
  // verl's SFT trainer logs `train/loss`; verl's RL losses (actor/pg_loss) are not what a user watches.
  { id: 'loss', title: 'Loss', keys: { verl: ['train/loss'], trl: ['loss'] } },
  {
    id: 'kl',
    title: 'KL',
    keys: { verl: ['actor/kl_loss', 'actor/ppo_kl', 'critic/kl'], trl: ['kl', 'objective/kl', 'policy/approxkl_avg'] },
  },
  { id: 'entropy', title: 'Entropy', keys: { verl: ['actor/entropy', 'actor/entropy_loss'], trl: ['entropy', 'objective/entropy'] } },
  {
    id: 'response_length',
    title: 'Response length',
    keys: { verl: ['response_length/mean'], trl: ['completions/mean_length', 'completion_length'] },
  },
  {
    id: 'validation',
    title: 'Validation score',
    keys: {
      verl: [/^val-core\/.+\/(acc|reward|score)\/mean@\d+$/, /^val\/test_score\//, /^val-core\//],
      trl: ['eval_reward', /^eval_rewards\/.+\/mean$/, 'eval_loss'],
    },
  },
  { id: 'step_time', title: 'Step time (s)', keys: { verl: ['timing_s/step', 'timing/step', 'perf/time_per_step'], trl: ['step_time'] } },
  { id: 'throughput', title: 'Throughput', keys: { verl: ['perf/throughput'], trl: ['train_samples_per_second'] } },
];

/** The metric that carries a headline in a series (the first key of its list the run logged), if any. */
export function headlineKey(def: HeadlineDef, names: readonly string[], framework: Framework | undefined): string | undefined {
  const lists = framework ? [def.keys[framework]] : [def.keys.verl, def.keys.trl];
  for (const keys of lists) {
    for (const k of keys) {
      const hit = typeof k === 'string' ? (names.includes(k) ? k : undefined) : names.find((n) => k.test(n));
      if (hit) return hit;
    }
  }
  return undefined;
}

/**
 * The headlines that say how a run is going, per algorithm, first the one shown beside a run or checkpoint: GRPO/PPO
 * the reward, DPO the reward margin and preference accuracy, SFT the loss and token accuracy. Without an algorithm,
 * the first of reward, margin, loss that the run logged decides (GRPO also logs `loss`, so reward comes first).
 */
export function primaryHeadlines(algorithm: string | undefined): Array<HeadlineDef['id']> {
  switch (algorithm?.toLowerCase()) {
    case 'sft':
      return ['loss', 'accuracy'];
    case 'dpo':
      return ['margin', 'accuracy'];
    case 'grpo':
    case 'ppo':
      return ['reward'];
    default:
      return ['reward', 'margin', 'loss'];
  }
}
