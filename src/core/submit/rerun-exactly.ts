import type { WorkspaceConfig } from '../config/workspace-config';
import { LocatedError } from '../errors/located-error';
import type { HostPool } from '../remote/host-pool';
import type { SecretSource } from './run-environment';
import { submitRequest } from './submit-request';
import { parseRunSpec } from '../runs/load-run-spec';
import { sha256 } from '../runs/provenance';
import { diffProvenance, type Difference } from '../runs/provenance-diff';
import { differenceLine, differenceLines } from '../runs/provenance-text';
import type { RunProvenance } from '../runs/read-provenance';
import { RUN_FILES, type RunRecord } from '../runs/run-record';
import { submitRun, type PlannedProvenance } from '../runs/submit-run';

/** A re-run refused: what the host (or the workspace's reward files) no longer has as the run recorded it. */
export class RerunRefused extends Error {
  /** The first line: which run, where, and how many things differ. */
  readonly summary: string;

  constructor(
    readonly rerunOf: { id: string; host: string },
    readonly target: string,
    readonly differences: Difference[],
  ) {
    const n = differences.length;
    const summary = `${rerunOf.id} was not re-run: ${n} thing${n === 1 ? '' : 's'} on ${target} differ${n === 1 ? 's' : ''} from its ${RUN_FILES.provenance} (recorded \u2192 now)`;
    super(`${summary}:\n${differences.map((d) => `  ${differenceLine(d)}`).join('\n')}`);
    this.name = 'RerunRefused';
    this.summary = summary;
  }

  /** The differences as `medrl runs diff` prints them: `path: recorded → now`, then each changed reward file's unified diff. */
  lines(): string[] {
    return differenceLines(this.differences);
  }
}

export interface RerunRequest {
  /** The run to re-run, as readRunProvenance read it (its record, manifest, spec.yaml and reward files). */
  then: RunProvenance;
  config: WorkspaceConfig;
  /** The local workspace folder: the reward files are uploaded from it, as at any submit, and must match the manifest's. */
  workspaceRoot: string;
  pool: HostPool;
  secrets: SecretSource;
  /** Submit to this host instead of the run's own (a twin machine): its data, model and versions must match. */
  host?: string;
}

/**
 * Differences that do not make a re-run inexact: who submitted it from where (`submitted.*`, not what the job computes),
 * a service's run id (a restarted service is the same engine and model at its URL), and the host's name when the user
 * named another host. Ids, folders and times are already left out by diffProvenance.
 */
function counts(d: Difference, otherHost: boolean): boolean {
  if (d.path.startsWith('submitted.')) return false;
  if (/^services\..+\.runId$/.test(d.path)) return false;
  return !(otherHost && d.path === 'run.host');
}

/** What differs, that matters, between a run's provenance and what a submit of its spec would record now. */
export function rerunDifferences(then: RunProvenance, now: PlannedProvenance, otherHost = false): Difference[] {
  return diffProvenance(then, now).filter((d) => counts(d, otherHost));
}

/**
 * The run's spec.yaml, checked against its manifest: a run without a manifest, a job that is not a training run, or a
 * spec.yaml changed after submit cannot be re-run exactly.
 */
function recordedSpec(then: RunProvenance): { text: string; file: string } {
  const { record } = then;
  const file = `${then.host}:${record.dir}/${RUN_FILES.spec}`;
  if (record.kind !== 'train') throw new Error(`${record.id} is a ${record.kind} job: only training runs are re-run exactly`);
  if (then.note !== undefined)
    throw new Error(
      `run ${record.id} has no ${RUN_FILES.provenance} (submitted before manifests): there is nothing to check the host against; submit its spec instead (Re-run, or medrl submit)`,
    );
  if (then.specText === undefined) throw new Error(`${file} is missing: ${record.id} cannot be re-run`);
  if (sha256(then.specText) !== then.manifest.spec.sha256)
    throw new Error(
      `${file} was changed after ${record.id} was submitted (its sha256 is not the one in ${RUN_FILES.provenance}): it cannot be re-run exactly`,
    );
  return { text: then.specText, file };
}

/**
 * Re-runs a run exactly: submits its spec.yaml (as its run folder holds it, overrides and all) through submitRun, to its
 * host, with the reward files of the workspace. After the host checks, the host is measured as at any submit (data sha256,
 * size and rows; model config or revision; environment versions; git commit and dirtiness) and compared with the run's
 * provenance.json by diffProvenance; the reward files to upload are compared with the ones it recorded. Anything that
 * differs refuses the re-run (RerunRefused, listing each difference) before anything is written on the host; else the new
 * run's manifest records `rerunOf`.
 */
export async function rerunExactly(i: RerunRequest): Promise<{ record: RunRecord; rerunOf: { id: string; host: string } }> {
  const { then } = i;
  const spec = recordedSpec(then);
  const loaded = parseRunSpec(spec.text, spec.file);
  if (!loaded.spec)
    throw new LocatedError(
      `the spec of ${then.record.id} is not valid for this medrl`,
      loaded.problems.filter((p) => p.severity === 'error'),
    );
  const target = i.host ?? then.record.host;
  const req = await submitRequest({
    spec: loaded.spec,
    specText: spec.text,
    specFile: spec.file,
    config: i.config,
    workspaceRoot: i.workspaceRoot,
    pool: i.pool,
    host: target,
    secrets: i.secrets,
  });
  const rerunOf = { id: then.record.id, host: then.record.host };
  const { record } = await submitRun(req, {
    rerunOf,
    check: (now) => {
      const differences = rerunDifferences(then, now, target !== then.record.host);
      if (differences.length) throw new RerunRefused(rerunOf, target, differences);
    },
  });
  return { record, rerunOf };
}
