import type { ResolvedHost } from '../config/workspace-config';
import { shellQuote } from './shell-quote';

/** The host's setup lines and env, as the start of a script (what a job on it would see, e.g. conda or PATH). */
export function hostPrelude(host: Pick<ResolvedHost, 'setup' | 'env'>): string {
  const env = Object.entries(host.env).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
  return [...env, ...host.setup].join('\n');
}
