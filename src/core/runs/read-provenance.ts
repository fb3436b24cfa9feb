import { posix } from 'node:path';
import type { Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';
import { RUN_FILES, runRecordSchema, type RunRecord } from './run-record';
import { provenanceSchema, sha256, specContent, type Provenance } from './provenance';

/** Bytes of one file this reads back (a spec, a manifest, a reward module): more is not a file medrl wrote. */
const MAX_FILE = 4 * 1024 ** 2;

/** Reads the run folder's manifest, spec.yaml and reward/*.py in one round trip; a file that is absent reads as null. */
const READ_SCRIPT = String.raw`
import json, os, sys
d, limit = sys.argv[1], int(sys.argv[2])
def text(path):
    try:
        with open(path, 'rb') as f:
            b = f.read(limit + 1)
    except OSError:
        return None
    return b[:limit].decode('utf-8', 'replace')
reward, root = {}, os.path.join(d, 'reward')
for base, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x != '__pycache__']
    for n in files:
        if n.endswith('.py'):
            reward[os.path.relpath(os.path.join(base, n), root).replace(os.sep, '/')] = text(os.path.join(base, n))
print(json.dumps({'manifest': text(os.path.join(d, 'provenance.json')), 'spec': text(os.path.join(d, 'spec.yaml')), 'reward': reward}))
`;

export const NO_MANIFEST = 'no manifest (run submitted before provenance was recorded)';

/** A run's provenance as read from its folder: its manifest, or for an older run what its folder still tells. */
export interface RunProvenance {
  host: string;
  record: RunRecord;
  /** The whole manifest; for a run without one, only the spec and reward read from its folder. */
  manifest: Pick<Provenance, 'spec' | 'reward'> & Partial<Provenance>;
  /** The uploaded reward files' text (reward/ in the run folder), for a unified diff. */
  rewardText: Record<string, string>;
  /** spec.yaml as the run folder holds it (absent when it has none): what a re-run submits. */
  specText?: string;
  /** Set when the run has no provenance.json (NO_MANIFEST). */
  note?: string;
}

/** A run's provenance.json, or what can be read without it (run.json, spec.yaml, the reward files), in one round trip. */
export async function readRunProvenance(host: Host, record: RunRecord): Promise<RunProvenance> {
  const r = await host.exec(`python3 - ${shellQuote(record.dir)} ${MAX_FILE}`, { stdin: READ_SCRIPT, timeoutMs: 60_000 });
  if (r.code !== 0)
    throw new Error(`${host.name}: cannot read ${record.dir}: exit code ${r.code}: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
  const read = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    manifest: string | null;
    spec: string | null;
    reward: Record<string, string | null>;
  };
  const rewardText = Object.fromEntries(Object.entries(read.reward).filter((e): e is [string, string] => e[1] !== null));
  const at = `${host.name}:${record.dir}/${RUN_FILES.provenance}`;
  if (read.manifest !== null) {
    let data: unknown;
    try {
      data = JSON.parse(read.manifest);
    } catch {
      throw new Error(`${at} is not JSON`);
    }
    const parsed = provenanceSchema.safeParse(data, { error: plainZodError });
    if (!parsed.success)
      throw new Error(
        `${at} is not a manifest this medrl reads: ${plainIssues(parsed.error.issues)
          .map((i) => `${fieldPath(i.path)}: ${i.message}`)
          .join('; ')}`,
      );
    return { host: host.name, record, manifest: parsed.data, rewardText, ...(read.spec !== null ? { specText: read.spec } : {}) };
  }
  const files = Object.fromEntries(Object.entries(rewardText).map(([n, t]) => [n, { sha256: sha256(t), size: Buffer.byteLength(t) }]));
  const spec = read.spec ?? '';
  return {
    host: host.name,
    record,
    manifest: {
      spec: { file: RUN_FILES.spec, sha256: sha256(spec), content: specContent(spec) },
      reward: Object.keys(files).length ? { main: rewardMain(spec, files), function: rewardFunction(spec), files } : null,
    },
    rewardText,
    ...(read.spec !== null ? { specText: read.spec } : {}),
    // Services and merge jobs are started without one; a training run without one predates it.
    note:
      record.kind !== 'train'
        ? `no manifest (a ${record.kind} job has none)`
        : read.spec === null
          ? `${NO_MANIFEST}, and no ${RUN_FILES.spec}`
          : NO_MANIFEST,
  };
}

function specReward(specText: string): { path?: unknown; function?: unknown } {
  const c = specContent(specText) as { reward?: { path?: unknown; function?: unknown } } | null;
  return typeof c === 'object' && c && typeof c.reward === 'object' && c.reward ? c.reward : {};
}

/** The uploaded reward file: the spec's reward.path's name (it sits at the top of reward/). */
function rewardMain(specText: string, files: Record<string, unknown>): string {
  const p = specReward(specText).path;
  const name = typeof p === 'string' ? p.split('/').pop() : undefined;
  return name && name in files ? name : (Object.keys(files)[0] ?? '');
}

function rewardFunction(specText: string): string {
  const f = specReward(specText).function;
  return typeof f === 'string' ? f : 'compute_score';
}

/** The provenance of the run in a folder on this host, by its run.json (a run named by another run's manifest). */
export async function readRunFolderProvenance(host: Host, dir: string): Promise<RunProvenance> {
  const at = `${host.name}:${posix.join(dir, RUN_FILES.record)}`;
  const text = (await host.readFile(posix.join(dir, RUN_FILES.record))).toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`${at} is not JSON`);
  }
  const parsed = runRecordSchema.safeParse(data, { error: plainZodError });
  if (!parsed.success)
    throw new Error(
      `${at} is not a run record this medrl reads: ${plainIssues(parsed.error.issues)
        .map((i) => `${fieldPath(i.path)}: ${i.message}`)
        .join('; ')}`,
    );
  return readRunProvenance(host, parsed.data);
}
