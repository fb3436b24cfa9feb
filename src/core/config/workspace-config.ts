import { z } from 'zod';
import { parseScoreSpec } from '../scoring/score-parser';
import { errorMessage } from '../errors/located-error';

import { LOCAL_HOST } from './local-host-name';

export { LOCAL_HOST };

const hostName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'host names use letters, digits, ".", "_" and "-"');

export const schedulerSchema = z
  .enum(['ssh', 'slurm', 'ray'])
  .describe('How jobs start on the host: detached process (ssh), sbatch (slurm) or ray job submit (ray).');

const hostSchema = z
  .strictObject({
    ssh: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Alias from ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyJump come from there). Defaults to the host's key. Not allowed for `local`.",
      ),
    runsDir: z.string().min(1).optional().describe('Folder of run folders on the host. Default: ~/.medrl/runs'),
    workdir: z.string().min(1).optional().describe('Working directory jobs start in (the training code checkout).'),
    setup: z
      .array(z.string())
      .optional()
      .describe('Shell lines run before every job and check, e.g. `source ~/miniconda3/bin/activate verl`.'),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are letters, digits and _'), z.string())
      .optional()
      .describe('Environment variables for every job on this host (no secrets: those go to SecretStorage).'),
    scheduler: schedulerSchema.optional(),
    sharedFilesystem: z
      .union([z.boolean(), z.array(z.string().min(1))])
      .optional()
      .describe(
        "Ray: true when every node of the host's Ray cluster mounts the same files (the runs folder, data, models), or the absolute path prefixes that every node mounts (e.g. [/shared, /home]). Those paths are then not checked on each node before a submit.",
      ),
  })
  .describe('A machine that runs jobs.');

function scoreSpecError(spec: string): string | undefined {
  try {
    parseScoreSpec(spec);
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

const judgeSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/ })
      .describe('Base URL of an OpenAI-compatible server, ending in /v1 (vLLM, SGLang, any /v1 endpoint).'),
    model: z.string().min(1).describe('The served model name (vLLM --served-model-name).'),
    host: hostName.optional().describe("Host the server runs on; its port is forwarded over that host's SSH connection."),
    temperature: z.number().min(0).max(2).optional().describe('Sampling temperature (0 for reproducible judging).'),
    seed: z.int().optional().describe('Sampling seed sent with every request.'),
    maxConcurrency: z.int().min(1).max(1024).optional().describe('Requests in flight at once. Default 16.'),
    timeoutSeconds: z.number().positive().optional().describe('Per-request timeout, the whole answer included. Default 60.'),
    maxTokens: z.int().min(1).optional().describe('max_tokens of each judge request. Default 1024.'),
    prompt: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Prompt template for the reward playground: {solution_str}, {ground_truth}, {data_source}, {prompt}, {extra_info.FIELD}; {{ and }} are literal braces. Default: reference vs response, JSON score.',
      ),
    parse: z
      .string()
      .refine((s) => scoreSpecError(s) === undefined, { error: (issue) => scoreSpecError(String(issue.input)) ?? 'invalid score parser' })
      .optional()
      .describe(
        'How the answer becomes a score: number, json:FIELD, regex:PATTERN (first group), label:correct=1,incorrect=0. Default json:score.',
      ),
    apiKey: z.never({ error: 'API keys are kept in VS Code SecretStorage, not in medrl.yaml: run "MedRL: Set Judge API Key"' }).optional(),
  })
  .describe('An LLM judge or environment simulator. Its API key is kept in VS Code SecretStorage, never here.');

const datasetRootSchema = z
  .strictObject({
    path: z.string().min(1).describe('Folder of datasets: relative to the workspace, or absolute on the host.'),
    host: hostName.optional().describe('Host the folder is on; omitted means the workspace.'),
    label: z.string().optional(),
  })
  .describe('A folder of JSON, JSONL, parquet or CSV training data.');

/** A criterion's name: one word, so it can head a CSV column and key a review's scores. */
const criterionName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, 'a criterion name is a word: letters, digits, "_" or "-", starting with a letter');

const rubricCriterionSchema = z
  .union([
    criterionName,
    z.strictObject({
      name: criterionName,
      description: z.string().min(1).optional().describe('What the reviewer scores under this criterion, shown beside its 1–5 scale.'),
    }),
  ])
  .describe('A rubric criterion scored 1 to 5: its name (accuracy, safety, reasoning), or {name, description}.');

const reviewSchema = z
  .strictObject({
    rubric: z
      .array(rubricCriterionSchema)
      .default([])
      .superRefine((rubric, ctx) => {
        const seen = new Set<string>();
        rubric.forEach((c, i) => {
          const name = typeof c === 'string' ? c : c.name;
          if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [i], message: `criterion "${name}" is listed twice` });
          seen.add(name);
        });
      })
      .describe('Criteria a clinician scores 1 to 5 beside the verdict (correct, partial, incorrect, unsafe). Default: none.'),
  })
  .describe('Clinician review of episodes: verdicts and rubric scores kept in the run folder (reviews/<reviewer>.jsonl).');

export const workspaceConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    version: z.literal(1).default(1).describe('Format version of this file.'),
    hosts: z.record(hostName, hostSchema).default({}).describe('Hosts by name. `local` is built in and always present.'),
    judges: z.record(z.string().min(1), judgeSchema).default({}).describe('Judge servers by name.'),
    datasets: z.array(datasetRootSchema).default([]).describe('Dataset roots.'),
    defaults: z
      .strictObject({
        host: hostName.default(LOCAL_HOST).describe('Host a new run goes to.'),
        scheduler: schedulerSchema.default('ssh'),
        judge: z.string().optional().describe('Judge the playground and runs use when none is named.'),
      })
      .default({ host: LOCAL_HOST, scheduler: 'ssh' }),
    review: reviewSchema.default({ rubric: [] }),
  })
  .superRefine((cfg, ctx) => {
    const local = cfg.hosts[LOCAL_HOST];
    if (local?.ssh)
      ctx.addIssue({
        code: 'custom',
        path: ['hosts', LOCAL_HOST, 'ssh'],
        message: '`local` is the built-in local host; give an SSH host another name',
      });
    if (local?.scheduler && local.scheduler !== 'ssh')
      ctx.addIssue({
        code: 'custom',
        path: ['hosts', LOCAL_HOST, 'scheduler'],
        message: 'the local host runs jobs as local processes (scheduler: ssh)',
      });
    const known = new Set([LOCAL_HOST, ...Object.keys(cfg.hosts)]);
    if (!known.has(cfg.defaults.host))
      ctx.addIssue({ code: 'custom', path: ['defaults', 'host'], message: `unknown host "${cfg.defaults.host}": add it under hosts` });
    for (const [name, judge] of Object.entries(cfg.judges)) {
      if (judge.host && !known.has(judge.host))
        ctx.addIssue({ code: 'custom', path: ['judges', name, 'host'], message: `unknown host "${judge.host}": add it under hosts` });
    }
    cfg.datasets.forEach((d, i) => {
      if (d.host && !known.has(d.host))
        ctx.addIssue({ code: 'custom', path: ['datasets', i, 'host'], message: `unknown host "${d.host}": add it under hosts` });
    });
    if (cfg.defaults.judge && !cfg.judges[cfg.defaults.judge])
      ctx.addIssue({ code: 'custom', path: ['defaults', 'judge'], message: `unknown judge "${cfg.defaults.judge}": add it under judges` });
  });

export type WorkspaceConfig = z.output<typeof workspaceConfigSchema>;
export type JudgeConfig = z.output<typeof judgeSchema>;

/** A rubric criterion with its name and, when medrl.yaml gives one, what it means. */
export interface RubricCriterion {
  name: string;
  description?: string;
}

/** The rubric of medrl.yaml `review.rubric`, each criterion in one shape (none without medrl.yaml). */
export function rubricCriteria(cfg: WorkspaceConfig | undefined): RubricCriterion[] {
  return (cfg?.review.rubric ?? []).map((c) => (typeof c === 'string' ? { name: c } : c));
}

/** A host as the product sees it: the built-in local host, or an SSH alias. */
export interface ResolvedHost {
  name: string;
  kind: 'local' | 'ssh';
  sshAlias?: string;
  runsDir: string;
  workdir?: string;
  setup: string[];
  env: Record<string, string>;
  scheduler: z.output<typeof schedulerSchema>;
  /** medrl.yaml's sharedFilesystem: paths every Ray node sees (true: all), not checked node by node. */
  sharedFilesystem?: boolean | string[];
}

const DEFAULT_RUNS_DIR = '~/.medrl/runs';

/** Every host of the workspace, `local` first, with defaults filled in; without medrl.yaml only the built-in `local`. */
export function workspaceHosts(cfg?: WorkspaceConfig): ResolvedHost[] {
  const hosts: WorkspaceConfig['hosts'] = cfg?.hosts ?? {};
  const entries = Object.entries(hosts);
  if (!hosts[LOCAL_HOST]) entries.unshift([LOCAL_HOST, {}]);
  return entries
    .sort(([a], [b]) => (a === LOCAL_HOST ? -1 : b === LOCAL_HOST ? 1 : 0))
    .map(([name, h]) => ({
      name,
      kind: name === LOCAL_HOST ? 'local' : 'ssh',
      sshAlias: name === LOCAL_HOST ? undefined : (h.ssh ?? name),
      runsDir: h.runsDir ?? DEFAULT_RUNS_DIR,
      workdir: h.workdir,
      setup: h.setup ?? [],
      env: h.env ?? {},
      scheduler: h.scheduler ?? 'ssh',
      ...(h.sharedFilesystem !== undefined ? { sharedFilesystem: h.sharedFilesystem } : {}),
    }));
}

/**
 * The host of this name, from the workspace's hosts; an error naming the known ones when there is none, starting with
 * `field` (the spec field that named it) when given.
 */
export function findHost(hosts: WorkspaceConfig | ResolvedHost[] | undefined, name: string, field?: string): ResolvedHost {
  const all = Array.isArray(hosts) ? hosts : workspaceHosts(hosts);
  const h = all.find((x) => x.name === name);
  if (!h)
    throw new Error(
      `${field ? `${field}: ` : ''}unknown host "${name}": add it under hosts in medrl.yaml (the hosts are ${all.map((x) => x.name).join(', ')})`,
    );
  return h;
}
