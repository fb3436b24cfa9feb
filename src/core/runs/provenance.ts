import { createHash } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { environmentSchema } from '../remote/env-check';

/** sha256 of a text or bytes, hex: how every hash in a manifest is written. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

const hash = z.string().regex(/^[0-9a-f]{64}$/);

/** One data file of the run (data.train, data.val), measured on its host when the run was submitted. */
const dataFileSchema = z.object({
  field: z.string(),
  path: z.string(),
  size: z.number().nullable(),
  mtime: z.string().nullable(),
  sha256: hash.nullable(),
  /** How sha256 was computed (the whole file, or its ends and size past the size limit), or why there is none. */
  hashed: z.string(),
  rows: z.int().nullable(),
  /** How rows were counted (lines, lines after the header, the parquet footer), or why they were not. */
  rowsFrom: z.string(),
});

/** A server the run reaches as MEDRL_<NAME>_URL: a service started as a run (`medrl serve`). */
const serviceUseSchema = z.object({
  host: z.string(),
  engine: z.string(),
  model: z.string(),
  servedName: z.string(),
  url: z.string(),
  /** The service's own run id. */
  runId: z.string(),
});

/** A judge from medrl.yaml the run reaches as MEDRL_<NAME>_URL. */
const judgeUseSchema = z.object({
  judge: z.string(),
  host: z.string().nullable(),
  model: z.string(),
  url: z.string(),
  /** medrl.yaml's `prompt:`, else the built-in template. */
  promptSha256: hash,
  parser: z.string(),
  temperature: z.number().nullable(),
  seed: z.int().nullable(),
  maxTokens: z.int().nullable(),
});

/**
 * The checkpoint a run resumes from: its folder on the run's host, the step its name says (`global_step_N`,
 * `checkpoint-N`; null for another name) and the run whose folder holds it (null for a checkpoint outside a run folder).
 */
export const resumedFromSchema = z.object({
  checkpoint: z.string(),
  step: z.int().nullable(),
  run: z.object({ id: z.string(), dir: z.string() }).nullable(),
});
export type ResumedFrom = z.output<typeof resumedFromSchema>;

export type ServiceUse = z.output<typeof serviceUseSchema>;
export type JudgeUse = z.output<typeof judgeUseSchema>;

/** The services and judges a run uses, by the name its variables carry (MEDRL_<NAME>_URL); never their keys. */
export interface RunUses {
  services: Record<string, ServiceUse>;
  judges: Record<string, JudgeUse>;
}

/**
 * provenance.json, written into the run folder at submit before the job starts: everything that made the run's
 * numbers (the spec, the reward code, the data, the model, the host's environment, the code's commit, the servers it
 * calls) and who submitted it. Never a secret, never a row of data.
 */
export const provenanceSchema = z.object({
  version: z.literal(1),
  run: z.object({ id: z.string(), dir: z.string() }),
  submitted: z.object({
    user: z.string(),
    /** The machine medrl ran on (this one, not the run's host). */
    machine: z.string(),
    workspace: z.string(),
    at: z.string(),
  }),
  spec: z.object({
    file: z.string(),
    sha256: hash,
    /** spec.yaml as written (parsed YAML, before defaults). */
    content: z.unknown(),
  }),
  /** The reward function's files as uploaded into the run folder's reward/ (absent for a reward model or none). */
  reward: z
    .object({
      main: z.string(),
      function: z.string(),
      files: z.record(z.string(), z.object({ sha256: hash, size: z.int() })),
    })
    .nullable(),
  data: z.array(dataFileSchema),
  model: z.object({
    spec: z.string(),
    /** A model folder on the host, with its config.json's sha256 (null when it has none). */
    path: z.string().optional(),
    configSha256: hash.nullable().optional(),
    /** A hub id, with the revision the host's Hugging Face cache resolves `main` to (null when not cached there). */
    hubId: z.string().optional(),
    revision: z.string().nullable().optional(),
  }),
  /** The host's environment after its setup lines and the spec's (what the environment check reports), or why it is missing. */
  environment: z.union([environmentSchema, z.object({ error: z.string() })]),
  /** The run's working directory on its host. */
  git: z.object({ workdir: z.string(), commit: z.string().nullable(), dirty: z.boolean().nullable(), note: z.string().optional() }),
  services: z.record(z.string(), serviceUseSchema),
  judges: z.record(z.string(), judgeUseSchema),
  /** The run this one re-runs exactly (`medrl runs rerun`): added to version 1, absent from every other run. */
  rerunOf: z.object({ id: z.string(), host: z.string() }).optional(),
  /** The checkpoint the run resumes from (the spec's resume overrides), absent when it starts fresh or predates the field. */
  resumedFrom: resumedFromSchema.optional(),
});

export type Provenance = z.output<typeof provenanceSchema>;
export type DataFileProvenance = z.output<typeof dataFileSchema>;

/** What the run's host reported in the provenance round trip (provenance-host.ts). */
export interface HostFacts {
  data: DataFileProvenance[];
  model: Provenance['model'];
  environment: Provenance['environment'];
  git: Provenance['git'];
}

export interface ProvenanceInputs {
  id: string;
  dir: string;
  specText: string;
  workspace: string;
  now: Date;
  reward?: { main: string; function: string; files: Record<string, string> };
  facts: HostFacts;
  uses: RunUses;
  rerunOf?: { id: string; host: string };
  resumedFrom?: ResumedFrom;
}

/** The spec's YAML as written; a spec that does not parse (only an old run's could) is kept as its text. */
export function specContent(text: string): unknown {
  try {
    return parseYaml(text) as unknown;
  } catch {
    return text;
  }
}

/** Who submits: the login name (the environment's when the system has no entry for this uid, as in some containers). */
function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** A run's manifest from what submit already has and what its host reported. */
export function buildProvenance(i: ProvenanceInputs): Provenance {
  const files = Object.fromEntries(
    Object.entries(i.reward?.files ?? {}).map(([name, text]) => [name, { sha256: sha256(text), size: Buffer.byteLength(text) }]),
  );
  return {
    version: 1,
    run: { id: i.id, dir: i.dir },
    submitted: { user: userName(), machine: hostname(), workspace: i.workspace, at: i.now.toISOString() },
    spec: { file: 'spec.yaml', sha256: sha256(i.specText), content: specContent(i.specText) },
    reward: i.reward ? { main: i.reward.main, function: i.reward.function, files } : null,
    ...i.facts,
    ...i.uses,
    ...(i.rerunOf ? { rerunOf: i.rerunOf } : {}),
    ...(i.resumedFrom ? { resumedFrom: i.resumedFrom } : {}),
  };
}

/** A URL as a manifest may hold it: without user:password (a key in a URL stays out of the record). */
export function publicUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return url;
  }
}
