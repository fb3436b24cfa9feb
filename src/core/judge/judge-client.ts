import OpenAI from 'openai';
import type { ChatMessage } from '../reward/types';
import { ConcurrencyLimit } from './concurrency';
import type { JudgeCache, JudgeCacheKey } from './judge-cache';

export interface JudgeEndpoint {
  name: string;
  /** Base URL ending in /v1, reachable from here (a forwarded port for a judge on a remote host). */
  url: string;
  model: string;
  apiKey?: string;
  temperature?: number;
  seed?: number;
  maxTokens?: number;
  maxConcurrency?: number;
  timeoutMs?: number;
}

export interface JudgeCallOptions {
  signal?: AbortSignal;
  /** Ask the server even when the cache has an answer (the fresh answer replaces it). */
  bypassCache?: boolean;
}

/** One judge request, after retries: the raw answer (or why there is none). */
export interface JudgeCall {
  raw: string | null;
  error: string | null;
  latencyMs: number;
  attempts: number;
  cached: boolean;
}

export interface RetryPolicy {
  /** Attempts in all, the first included. Default 5. */
  attempts: number;
  /** First backoff; it doubles each retry (with jitter), up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 8000 };

/** Whether a failed request is worth another try, and how long the server asked us to wait. */
function retryable(err: unknown): { retry: boolean; afterMs?: number } {
  if (err instanceof OpenAI.APIUserAbortError) return { retry: false };
  if (err instanceof OpenAI.APIConnectionError) return { retry: true }; // dropped connection, refused, timeout
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    if (status === 429 || status === 408 || status >= 500) return { retry: true, afterMs: retryAfterMs(err.headers) };
    return { retry: false };
  }
  return { retry: err instanceof SyntaxError }; // a truncated or malformed JSON body
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms)) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return 'timed out';
  if (err instanceof OpenAI.APIConnectionError) return `connection failed (${err.cause instanceof Error ? err.cause.message : err.message})`;
  if (err instanceof OpenAI.APIError) {
    const hint = err.status === 401 ? ' (set the judge API key: "MedRL: Set Judge API Key", or MEDRL_JUDGE_API_KEY for the CLI)' : '';
    return `${err.message}${hint}`;
  }
  if (err instanceof SyntaxError) return `malformed JSON from the server (${err.message})`;
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

/**
 * An OpenAI-compatible judge (vLLM, SGLang, any /v1 server) through the `openai` package: at most `maxConcurrency`
 * requests at once, retries with exponential backoff on 429 (waiting what retry-after says), 5xx, timeouts, dropped
 * connections and malformed answers, and an optional on-disk cache. Sampling parameters are fixed per judge and shown.
 */
export class JudgeClient {
  private readonly client: OpenAI;
  private readonly limit: ConcurrencyLimit;
  readonly temperature: number;
  readonly seed: number | undefined;
  readonly maxTokens: number;

  constructor(readonly endpoint: JudgeEndpoint, private readonly cache?: JudgeCache, private readonly retry: RetryPolicy = DEFAULT_RETRY) {
    this.client = new OpenAI({ apiKey: endpoint.apiKey || 'EMPTY', baseURL: endpoint.url, maxRetries: 0, timeout: endpoint.timeoutMs ?? 60_000 });
    this.limit = new ConcurrencyLimit(endpoint.maxConcurrency ?? 16);
    this.temperature = endpoint.temperature ?? 0;
    this.seed = endpoint.seed;
    this.maxTokens = endpoint.maxTokens ?? 1024;
  }

  /** The parameters every request carries, for display next to results (judge reproducibility). */
  get params(): { temperature: number; seed?: number; maxTokens: number } {
    return { temperature: this.temperature, ...(this.seed === undefined ? {} : { seed: this.seed }), maxTokens: this.maxTokens };
  }

  async chat(messages: ChatMessage[], opts: JudgeCallOptions = {}): Promise<JudgeCall> {
    const key: JudgeCacheKey = { url: this.endpoint.url, model: this.endpoint.model, messages, temperature: this.temperature, seed: this.seed, maxTokens: this.maxTokens };
    if (this.cache && !opts.bypassCache) {
      const hit = await this.cache.get(key);
      if (hit !== undefined) return { raw: hit, error: null, latencyMs: 0, attempts: 0, cached: true };
    }
    // The cache is written after the request's slot is free: a disk write does not hold back the next request.
    const call = await this.limit.run(async (): Promise<JudgeCall> => {
      const started = performance.now();
      let attempts = 0;
      for (;;) {
        attempts++;
        try {
          opts.signal?.throwIfAborted();
          const res = await this.client.chat.completions.create(
            { model: this.endpoint.model, messages: messages.map((m) => ({ role: m.role as 'user', content: m.content })), temperature: this.temperature, max_tokens: this.maxTokens, ...(this.seed === undefined ? {} : { seed: this.seed }) },
            { signal: opts.signal },
          );
          const raw = res.choices?.[0]?.message?.content;
          if (typeof raw !== 'string') throw new SyntaxError('the answer has no choices[0].message.content');
          return { raw, error: null, latencyMs: performance.now() - started, attempts, cached: false };
        } catch (err) {
          if (opts.signal?.aborted) return { raw: null, error: 'cancelled', latencyMs: performance.now() - started, attempts, cached: false };
          const { retry, afterMs } = retryable(err);
          if (!retry || attempts >= this.retry.attempts) {
            return { raw: null, error: `${describe(err)}${attempts > 1 ? ` (after ${attempts} attempts)` : ''}`, latencyMs: performance.now() - started, attempts, cached: false };
          }
          const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempts - 1)) * (0.75 + Math.random() * 0.5);
          await sleep(afterMs !== undefined ? Math.min(afterMs, 60_000) : backoff, opts.signal);
        }
      }
    });
    if (call.raw !== null && this.cache) {
      try {
        await this.cache.put(key, call.raw);
      } catch (err) {
        return { ...call, raw: null, error: `the judge answered, but its answer could not be cached: ${err instanceof Error ? err.message : String(err)}` };
      }
    }
    return call;
  }
}
