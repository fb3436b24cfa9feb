import type { Difference } from './provenance-diff';
import type { RunProvenance } from './read-provenance';

/** A value in a line: text as it is, none as "(none)", anything else as JSON. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '(none)';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function short(hash: string | null | undefined): string {
  return hash ? hash.slice(0, 12) : '(none)';
}

/** A run's provenance as lines of text: what `medrl runs show` prints after the record. */
export function provenanceLines(p: RunProvenance): string[] {
  const m = p.manifest;
  const r = p.record;
  const out = [`run ${r.id} (${r.name}) on ${r.host}, ${r.scheduler} scheduler, ${r.framework} ${r.algorithm}, created ${r.created}`];
  if (r.trainerVersion) out.push(`trainer version: ${r.trainerVersion}`);
  if (p.note) out.push(p.note);
  if (m.submitted)
    out.push(`submitted by ${m.submitted.user} on ${m.submitted.machine} from ${m.submitted.workspace} at ${m.submitted.at}`);
  if (m.rerunOf) out.push(`re-run exactly of ${m.rerunOf.id} on ${m.rerunOf.host}`);
  out.push(`spec: ${m.spec.file} sha256 ${m.spec.sha256}`);
  if (m.reward) {
    out.push(`reward: ${m.reward.main} (${m.reward.function})`);
    for (const [name, f] of Object.entries(m.reward.files)) out.push(`  ${name}  sha256 ${f.sha256}  ${f.size} bytes`);
  }
  if (m.data) {
    out.push('data:');
    for (const d of m.data)
      out.push(
        `  ${d.field} ${d.path}: ${d.size ?? '?'} bytes, modified ${d.mtime ?? '?'}, rows ${d.rows ?? '?'} (${d.rowsFrom}), sha256 ${d.sha256 ?? '(none)'} (${d.hashed})`,
      );
  }
  if (m.model)
    out.push(
      m.model.path !== undefined
        ? `model: ${m.model.path} (config.json sha256 ${m.model.configSha256 ?? 'none: no config.json'})`
        : `model: ${m.model.hubId ?? m.model.spec} (revision ${m.model.revision ?? 'unknown: not in the host\u2019s Hugging Face cache'})`,
    );
  if (m.environment) {
    const e = m.environment;
    if ('error' in e) out.push(`environment: not recorded: ${e.error}`);
    else {
      out.push(
        `environment: Python ${e.python} (${e.executable}), CUDA ${e.cuda ?? 'none'}, driver ${e.driver ?? 'none'}, ${e.gpuCount} GPU(s)${e.gpuNames.length ? ` (${[...new Set(e.gpuNames)].join(', ')})` : ''}`,
      );
      out.push(
        `  ${Object.entries(e.packages)
          .map(([n, v]) => `${n} ${v ?? 'not installed'}`)
          .join(', ')}`,
      );
    }
  }
  if (m.git)
    out.push(
      `git: ${m.git.workdir}: ${m.git.commit ? `${m.git.commit}${m.git.dirty ? ' (dirty)' : ''}` : `no commit (${m.git.note ?? 'unknown'})`}`,
    );
  if (m.resumedFrom) {
    const r = m.resumedFrom;
    out.push(
      `resumed from: ${r.checkpoint}${r.run ? ` (run ${r.run.id}` : ' (not in a run folder'}${r.step !== null ? `, step ${r.step})` : ')'}`,
    );
  }
  for (const [name, s] of Object.entries(m.services ?? {}))
    out.push(`service ${name}: ${s.engine} ${s.model} as ${s.servedName} at ${s.url} on ${s.host} (run ${s.runId})`);
  for (const [name, j] of Object.entries(m.judges ?? {}))
    out.push(
      `judge ${name}: ${j.judge}, ${j.model} at ${j.url}${j.host ? ` on ${j.host}` : ''}, prompt sha256 ${short(j.promptSha256)}, parser ${j.parser}, temperature ${valueText(j.temperature)}, seed ${valueText(j.seed)}`,
    );
  return out;
}

/** A few lines that identify what a run was made with (the Runs view's tooltip): data, reward files, trainer, git. */
export function provenanceSummary(p: RunProvenance): string[] {
  const m = p.manifest;
  const out: string[] = [];
  if (p.note) out.push(p.note);
  for (const d of m.data ?? []) out.push(`${d.field}: sha256 ${short(d.sha256)}, rows ${d.rows ?? '?'}`);
  for (const [name, f] of Object.entries(m.reward?.files ?? {})) out.push(`reward ${name}: sha256 ${short(f.sha256)}`);
  if (p.record.trainerVersion) out.push(`trainer: ${p.record.trainerVersion}`);
  if (m.git) out.push(`git: ${m.git.commit ? `${m.git.commit.slice(0, 12)}${m.git.dirty ? ' (dirty)' : ''}` : 'no commit'}`);
  return out;
}

/** One difference as a line: `path: a → b`. */
export function differenceLine(d: Difference): string {
  return `${d.path}: ${valueText(d.a)} \u2192 ${valueText(d.b)}`;
}

/** Differences as lines: `path: a → b`, then each reward file's unified diff. */
export function differenceLines(diffs: Difference[]): string[] {
  if (!diffs.length) return ['no differences'];
  return [...diffs.map(differenceLine), ...diffs.filter((d) => d.diff).map((d) => `\n${d.diff!.trimEnd()}`)];
}
