import { Document } from 'yaml';
import type { RunSpec } from './run-spec';

/** The answers of the "new run" flow. */
export interface NewRunAnswers {
  name: string;
  framework: RunSpec['framework'];
  algorithm: RunSpec['algorithm'];
  host: string;
  model: string;
  train: string;
  reward?: { path: string; function: string } | { model: string };
}

/** Sensible first overrides per framework: the keys a user tunes first, so they are there to edit. */
function starterOverrides(a: NewRunAnswers): Record<string, string | number | boolean> {
  if (a.framework === 'verl') {
    return a.algorithm === 'sft'
      ? { 'data.train_batch_size': 32, 'optim.lr': 1e-5, 'trainer.total_epochs': 1 }
      : {
          'data.train_batch_size': 32,
          'data.max_prompt_length': 1024,
          'data.max_response_length': 1024,
          'actor_rollout_ref.actor.optim.lr': 1e-6,
          'trainer.total_epochs': 1,
          'trainer.save_freq': 10,
          'trainer.test_freq': 10,
        };
  }
  return {
    learning_rate: a.algorithm === 'sft' ? 2e-5 : 1e-6,
    per_device_train_batch_size: 4,
    logging_steps: 1,
    ...(a.algorithm === 'grpo' ? { num_generations: 8 } : {}),
  };
}

/** A run spec (YAML with a schema line and comments) from the answers; the user edits it before submitting. */
export function renderNewSpec(a: NewRunAnswers): string {
  const spec: Record<string, unknown> = {
    name: a.name,
    framework: a.framework,
    algorithm: a.algorithm,
    host: a.host,
    model: a.model,
    data: { train: a.train },
    ...(a.reward ? { reward: a.reward } : {}),
    ...(a.framework === 'verl' && a.algorithm !== 'sft' ? { rollout: { engine: 'vllm', n: 8 } } : {}),
    resources: { nodes: 1, gpusPerNode: a.host === 'local' ? 0 : 1 },
    overrides: starterOverrides(a),
  };
  const doc = new Document(spec);
  doc.commentBefore = ` Run spec written by "MedRL: New Run". Submit it with "MedRL: Submit Run Spec" (or medrl submit FILE).\n overrides: the trainer's own keys (verl Hydra keys, TRL flags), passed through untouched.`;
  return doc.toString();
}
