import OpenAI from 'openai';
import type { ChatMessage } from '../scoring/sample';
import { ConcurrencyLimit } from './concurrency';
import type { JudgeCache, JudgeCacheKey } from './judge-cache';
import { errorMessage } from '../errors/located-error';

interface JudgeEndpoint {
  name: string;
  /** Base URL ending in /v1, reachable from here (a forwarded port for a judge on a remote host). */
  url: string;
  model: string;
  apiKey?: string;
  temperature?: number;
  seed?: number;
  maxTokens?: number;
  maxConcurrency?: number;
  /** Bound on one request, response body included. Default 60 s. */
  timeoutMs?: number;
  /** Answers larger than this are refused while they stream in (never buffered whole). Default 4 MiB. */
  maxResponseBytes?: number;
  /** The longest `Retry-After` waited for; a server asking for more fails the row at once. Default 60 s. */
  maxRetryAfterMs?: number;
}

/** The defaults of the bounds above (docs/hosts.md states them, under "Slow and broken servers"). */
const JUDGE_LIMITS = { timeoutMs: 60_000, maxResponseBytes: 4 * 1024 * 1024, maxRetryAfterMs: 60_000 } as const;

export interface JudgeCallOptions {
  signal?: AbortSignal;
  /** Ask the server even when the cache has an answer (the fresh answer replaces it). */
  bypassCache?: boolean;
  /** The batch's deadline (a Date.now() time): the call ends by then, with an error naming the deadline if unanswered. */
  deadline?: { at: number; label: string };
}

/** One judge request, after retries: the raw answer (or why there is none). */
interface JudgeCall {
  raw: string | null;
  error: string | null;
  latencyMs: number;
  attempts: number;
  cached: boolean;
}

interface RetryPolicy {
  /** Attempts in all, the first included. Default 5. */
  attempts: number;
  /** First backoff; it doubles each retry (with jitter), up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 8000 };

/** Whether a failed request is worth another try, and how long the server asked us to wait. */
function retryable(err: unknown): { retry: boolean; afterMs?: number } {
  if (
    err instanceof JudgeAnswerTooLargeError ||
    (err instanceof OpenAI.APIConnectionError && err.cause instanceof JudgeAnswerTooLargeError)
  )
    return { retry: false };
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
  if (err instanceof OpenAI.APIConnectionError && err.cause instanceof JudgeAnswerTooLargeError) return err.cause.message;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return 'timed out';
  if (err instanceof OpenAI.APIConnectionError)
    return `connection failed (${err.cause instanceof Error ? err.cause.message : err.message})`;
  if (err instanceof OpenAI.APIError) {
    const hint = err.status === 401 ? ' (set the judge API key: "MedRL: Set Judge API Key", or MEDRL_JUDGE_API_KEY for the CLI)' : '';
    return `${err.message}${hint}`;
  }
  if (err instanceof SyntaxError) return `malformed JSON from the server (${err.message})`;
  return errorMessage(err);
}

/** A judge answer over the size limit, refused while it streams in. */
class JudgeAnswerTooLargeError extends Error {
  constructor(limit: number, declared?: number) {
    super(
      declared === undefined
        ? `the judge's answer passed the ${mib(limit)} limit while streaming; refused, the rest unread`
        : `the judge's answer is ${mib(declared)} (Content-Length), over the ${mib(limit)} limit; refused unread`,
    );
    this.name = 'JudgeAnswerTooLargeError';
  }
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * fetch whose response body errors once it passes `maxBytes` (and is refused at once when Content-Length says so), so
 * the SDK's `response.json()` never holds more than that: an answer is bounded while it streams, not after.
 */
function sizeLimitedFetch(maxBytes: number): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await res.body?.cancel();
      throw new JudgeAnswerTooLargeError(maxBytes, declared);
    }
    if (!res.body) return res;
    let seen = 0;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          seen += chunk.byteLength;
          if (seen > maxBytes) out.error(new JudgeAnswerTooLargeError(maxBytes));
          else out.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

function seconds(ms: number): string {
  return `${+(ms / 1000).toFixed(1)} s`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * An OpenAI-compatible judge (vLLM, SGLang, any /v1 server) through the `openai` package: at most `maxConcurrency`
 * requests at once, retries with exponential backoff on 429 (waiting what retry-after says, up to `maxRetryAfterMs`),
 * 5xx, timeouts, dropped connections and malformed answers, and an optional on-disk cache. Every request is bounded in
 * time (`timeoutMs`, body included) and size (`maxResponseBytes`). Sampling parameters are fixed per judge and shown.
 */
export class JudgeClient {
  private readonly client: OpenAI;
  private readonly limit: ConcurrencyLimit;
  readonly temperature: number;
  readonly seed: number | undefined;
  readonly maxTokens: number;
  readonly timeoutMs: number;
  readonly maxRetryAfterMs: number;

  constructor(
    readonly endpoint: JudgeEndpoint,
    private readonly cache?: JudgeCache,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    this.timeoutMs = endpoint.timeoutMs ?? JUDGE_LIMITS.timeoutMs;
    this.maxRetryAfterMs = endpoint.maxRetryAfterMs ?? JUDGE_LIMITS.maxRetryAfterMs;
    // The SDK's `timeout` ends when the headers arrive (openai 6.49 client.js fetchWithTimeout clears it then); the
    // per-attempt signal in chat() bounds the body too. Retries are ours (Retry-After cap, batch deadline).
    this.client = new OpenAI({
      apiKey: endpoint.apiKey || 'EMPTY',
      baseURL: endpoint.url,
      maxRetries: 0,
      timeout: this.timeoutMs,
      fetch: sizeLimitedFetch(endpoint.maxResponseBytes ?? JUDGE_LIMITS.maxResponseBytes),
    });
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
    const key: JudgeCacheKey = {
      url: this.endpoint.url,
      model: this.endpoint.model,
      messages,
      temperature: this.temperature,
      seed: this.seed,
      maxTokens: this.maxTokens,
    };
    if (this.cache && !opts.bypassCache) {
      const hit = await this.cache.get(key);
      if (hit !== undefined) return { raw: hit, error: null, latencyMs: 0, attempts: 0, cached: true };
    }
    const { deadline } = opts;
    // The cache is written after the request's slot is free: a disk write does not hold back the next request.
    const call = await this.limit.run(async (): Promise<JudgeCall> => {
      const started = performance.now();
      let attempts = 0;
      const failed = (error: string): JudgeCall => ({ raw: null, error, latencyMs: performance.now() - started, attempts, cached: false });
      if (opts.signal?.aborted) return failed('cancelled');
      if (deadline && Date.now() >= deadline.at) return failed(`not judged: ${deadline.label} passed before its turn`);
      for (;;) {
        attempts++;
        // One bound for the whole attempt, body included; never past the batch deadline.
        const budget = Math.min(this.timeoutMs, deadline ? deadline.at - Date.now() : Infinity);
        const timer = AbortSignal.timeout(Math.max(1, budget));
        const signal = opts.signal ? AbortSignal.any([opts.signal, timer]) : timer;
        let err: unknown;
        try {
          const res = await this.client.chat.completions.create(
            {
              model: this.endpoint.model,
              messages: messages.map((m) => ({ role: m.role as 'user', content: m.content })),
              temperature: this.temperature,
              max_tokens: this.maxTokens,
              ...(this.seed === undefined ? {} : { seed: this.seed }),
            },
            { signal },
          );
          const raw = res.choices?.[0]?.message?.content;
          if (typeof raw !== 'string') throw new SyntaxError('the answer has no choices[0].message.content');
          return { raw, error: null, latencyMs: performance.now() - started, attempts, cached: false };
        } catch (e) {
          err = e;
        }
        if (opts.signal?.aborted) return failed('cancelled');
        const after = attempts > 1 ? ` (after ${attempts} attempts)` : '';
        if (timer.aborted) {
          if (budget < this.timeoutMs) return failed(`stopped: ${deadline!.label} passed while the judge was answering${after}`);
          err = new Error(`no complete answer within ${seconds(this.timeoutMs)}`);
        }
        const { retry, afterMs } = timer.aborted ? { retry: true, afterMs: undefined } : retryable(err);
        if (!retry || attempts >= this.retry.attempts) return failed(`${describe(err)}${after}`);
        if (afterMs !== undefined && afterMs > this.maxRetryAfterMs) {
          return failed(
            `${describe(err)}; the judge asked to retry after ${seconds(afterMs)} (Retry-After), longer than the ${seconds(this.maxRetryAfterMs)} MedRL waits: not retried${after}`,
          );
        }
        const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempts - 1)) * (0.75 + Math.random() * 0.5);
        const wait = afterMs ?? backoff;
        if (deadline && Date.now() + wait >= deadline.at)
          return failed(`${describe(err)}; not retried: ${deadline.label} comes first${after}`);
        await sleep(wait, opts.signal);
      }
    });
    if (call.raw !== null && this.cache) {
      try {
        await this.cache.put(key, call.raw);
      } catch (err) {
        return { ...call, raw: null, error: `the judge answered, but its answer could not be cached: ${errorMessage(err)}` };
      }
    }
    return call;
  }
}
