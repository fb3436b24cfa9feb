export type RewardKind = 'verl' | 'trl';

/** A reward function as the worker found it (or why it could not load it). */
export interface FunctionInfo {
  ok: boolean;
  path: string;
  name?: string;
  kind?: RewardKind;
  params?: string[];
  /** Parameters without a default (a caller must pass them). */
  required?: string[];
  /** It takes **kwargs. */
  varKw?: boolean;
  isAsync?: boolean;
  error?: string;
  traceback?: string;
}
