import { isDeepStrictEqual } from 'node:util';
import { unifiedDiff } from '../format/unified-diff';
import type { RunProvenance } from './read-provenance';
import type { Provenance } from './provenance';

/** One thing two runs were made with differently: where (a dotted path), A's value and B's; a unified diff for reward files. */
export interface Difference {
  path: string;
  a: unknown;
  b: unknown;
  diff?: string;
}

/** The sides of two runs compared: what each was made with. */
type Side = Pick<RunProvenance, 'record' | 'manifest' | 'rewardText'>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Leaves of a value by dotted path (lists are leaves: a list's order is part of its value; an empty object has none). */
function leaves(v: unknown, prefix: string, out = new Map<string, unknown>()): Map<string, unknown> {
  if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) leaves(x, `${prefix}.${k}`, out);
  else out.set(prefix, v);
  return out;
}

/** Every leaf that differs between a and b under one prefix; a leaf on one side only is null on the other. */
function compare(out: Difference[], prefix: string, a: unknown, b: unknown): void {
  const la = leaves(a, prefix);
  const lb = leaves(b, prefix);
  for (const path of new Set([...la.keys(), ...lb.keys()])) {
    const x = la.get(path) ?? null;
    const y = lb.get(path) ?? null;
    if (!isDeepStrictEqual(x, y)) out.push({ path, a: x, b: y });
  }
}

/** The spec's keys (overrides apart: their keys are dotted trainer keys, compared whole). */
function specParts(content: unknown): { spec: Record<string, unknown>; overrides: Record<string, unknown> } {
  if (!isPlainObject(content)) return { spec: { text: content }, overrides: {} };
  const { overrides, ...spec } = content;
  return { spec, overrides: isPlainObject(overrides) ? overrides : {} };
}

function rewardFiles(s: Side): Record<string, string> {
  return Object.fromEntries(Object.entries(s.manifest.reward?.files ?? {}).map(([n, f]) => [n, f.sha256]));
}

/** Data files by `<field>[i]` (under `data.`: data.train[0]): the i-th file of data.train or data.val. */
function dataByField(data: Provenance['data']): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const seen = new Map<string, number>();
  for (const f of data) {
    const i = seen.get(f.field) ?? 0;
    seen.set(f.field, i + 1);
    // mtime is left out: a copy or a touch changes it, and the hash says whether the content did.
    out[`${f.field.replace(/^data\./, '')}[${i}]`] = { path: f.path, size: f.size, sha256: f.sha256, rows: f.rows };
  }
  return out;
}

/**
 * What differs between two runs' provenance, in a fixed order: the run's host, scheduler and trainer version, the
 * spec's keys (`spec.*`), its overrides (`overrides.<key>`), the reward files (`reward.files.<name>`, with a unified
 * diff), data, model, environment, git, services, judges, and who submitted from where. What always differs between two
 * runs is left out: ids, run folders, times (run.json's `created`, `submitted.at`, data files' mtime) and the spec's
 * sha256 (its keys are compared instead). A section that one run has no record of (an older run, no manifest) is not compared.
 */
export function diffProvenance(a: Side, b: Side): Difference[] {
  const out: Difference[] = [];
  const run = (s: Side) => ({ host: s.record.host, scheduler: s.record.scheduler, trainerVersion: s.record.trainerVersion ?? null });
  compare(out, 'run', run(a), run(b));
  const sa = specParts(a.manifest.spec.content);
  const sb = specParts(b.manifest.spec.content);
  compare(out, 'spec', sa.spec, sb.spec);
  for (const key of new Set([...Object.keys(sa.overrides), ...Object.keys(sb.overrides)])) {
    const x = sa.overrides[key] ?? null;
    const y = sb.overrides[key] ?? null;
    if (!isDeepStrictEqual(x, y)) out.push({ path: `overrides.${key}`, a: x, b: y });
  }
  const ra = rewardFiles(a);
  const rb = rewardFiles(b);
  for (const name of [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort()) {
    if (ra[name] === rb[name]) continue;
    const diff = unifiedDiff(a.rewardText[name] ?? '', b.rewardText[name] ?? '', `a/${name}`, `b/${name}`);
    out.push({ path: `reward.files.${name}`, a: ra[name] ?? null, b: rb[name] ?? null, ...(diff ? { diff } : {}) });
  }
  const ma = a.manifest;
  const mb = b.manifest;
  if (ma.data && mb.data) compare(out, 'data', dataByField(ma.data), dataByField(mb.data));
  for (const key of ['model', 'environment', 'git', 'services', 'judges'] as const)
    if (ma[key] && mb[key]) compare(out, key, ma[key], mb[key]);
  if (ma.submitted && mb.submitted) {
    const who = (s: Provenance['submitted']) => ({ user: s.user, machine: s.machine, workspace: s.workspace });
    compare(out, 'submitted', who(ma.submitted), who(mb.submitted));
  }
  return out;
}
