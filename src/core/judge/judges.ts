import type { JudgeConfig, WorkspaceConfig } from '../config/workspace-config';
import type { HostPool } from '../remote/host-pool';
import type { PortForward } from '../remote/host';
import { JudgeCache } from './judge-cache';
import { JudgeClient } from './judge-client';
import { DEFAULT_JUDGE_PARSER, DEFAULT_JUDGE_PROMPT, type JudgeScorer } from './judge-scorer';
import { parseScoreSpec } from '../scoring/score-parser';

/** The environment variables a reward function reads to reach the judge (python/reward_worker.py sets them). */
export const JUDGE_ENV = { url: 'MEDRL_JUDGE_URL', model: 'MEDRL_JUDGE_MODEL', apiKey: 'MEDRL_JUDGE_API_KEY' } as const;

function judgeNames(config: WorkspaceConfig): string[] {
  return Object.keys(config.judges);
}

/** The judge a command means: the one named, else `defaults.judge`, else the only one. */
export function pickJudge(config: WorkspaceConfig, name: string | undefined): [string, JudgeConfig] {
  const names = judgeNames(config);
  const chosen = name ?? config.defaults.judge ?? (names.length === 1 ? names[0] : undefined);
  if (!chosen) throw new Error(names.length ? `name a judge: ${names.join(', ')}` : 'no judges in medrl.yaml: add one under judges:');
  const judge = config.judges[chosen];
  if (!judge) throw new Error(`unknown judge "${chosen}": medrl.yaml has ${names.join(', ') || 'none'}`);
  return [chosen, judge];
}

export interface OpenedJudge {
  name: string;
  scorer: JudgeScorer;
  /** The URL as the judge's own host sees it: what a reward function running there should call. */
  hostUrl: string;
  /** The host the judge runs on (medrl.yaml `host:`). */
  host?: string;
  apiKey?: string;
  close(): Promise<void>;
}

/**
 * A judge from medrl.yaml, ready to call: a judge on a remote host is reached through its host's SSH connection
 * (a forwarded port); the key comes from the caller (SecretStorage in VS Code, MEDRL_JUDGE_API_KEY in the CLI).
 */
export async function openJudge(
  name: string,
  judge: JudgeConfig,
  opts: { pool?: HostPool; apiKey?: string; cacheDir?: string },
): Promise<OpenedJudge> {
  let url = judge.url;
  let forward: PortForward | undefined;
  if (judge.host && opts.pool) {
    const host = await opts.pool.get(judge.host);
    if (host.kind !== 'local') {
      const u = new URL(judge.url);
      const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
      forward = await host.forwardPort(port, u.hostname);
      u.hostname = '127.0.0.1';
      u.port = String(forward.localPort);
      url = u.toString().replace(/\/$/, '');
    }
  }
  const client = new JudgeClient(
    {
      name,
      url,
      model: judge.model,
      apiKey: opts.apiKey,
      temperature: judge.temperature,
      seed: judge.seed,
      maxTokens: judge.maxTokens,
      maxConcurrency: judge.maxConcurrency,
      timeoutMs: judge.timeoutSeconds === undefined ? undefined : judge.timeoutSeconds * 1000,
    },
    opts.cacheDir ? new JudgeCache(opts.cacheDir) : undefined,
  );
  return {
    name,
    scorer: {
      client,
      template: judge.prompt ?? DEFAULT_JUDGE_PROMPT,
      parser: judge.parse ? parseScoreSpec(judge.parse) : DEFAULT_JUDGE_PARSER,
    },
    hostUrl: judge.url,
    host: judge.host,
    apiKey: opts.apiKey,
    close: async () => {
      await forward?.close();
    },
  };
}

/**
 * The environment a reward function gets so it calls this judge: on the judge's own host (or any remote host) the URL
 * from medrl.yaml; on the local host the URL this process reaches (a forwarded port for a remote judge).
 */
export function judgeEnv(judge: OpenedJudge, worker: { name: string; kind: 'local' | 'ssh' }): Record<string, string> {
  const url = worker.kind === 'local' && judge.host !== worker.name ? judge.scorer.client.endpoint.url : judge.hostUrl;
  return {
    [JUDGE_ENV.url]: url,
    [JUDGE_ENV.model]: judge.scorer.client.endpoint.model,
    ...(judge.apiKey ? { [JUDGE_ENV.apiKey]: judge.apiKey } : {}),
  };
}
