import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildProvenance, provenanceSchema, type HostFacts, type ResumedFrom } from '../../../src/core/runs/provenance';
import { NO_MANIFEST, type RunProvenance } from '../../../src/core/runs/read-provenance';
import { changePointText, resumeChanges, type ReadResumedRun } from '../../../src/core/runs/provenance-changes';
import { resumedFrom } from '../../../src/core/runs/resumed-from';
import { resumeSpecText } from '../../../src/core/checkpoints/resume-spec';
import { loadYamlWithSchema } from '../../../src/core/config/yaml-document';
import { runSpecSchema, type RunSpec } from '../../../src/core/runs/run-spec';
import type { Checkpoint } from '../../../src/core/checkpoints/checkpoint';
import { SPEC, judgeUse } from './provenance-fixtures';

const FACTS: HostFacts = {
  data: [],
  model: { spec: '/models/qwen', path: '/models/qwen', configSha256: null },
  environment: { error: 'not checked' },
  git: { workdir: '/ws', commit: null, dirty: null, note: 'not a repository' },
};

const DIRS = { home: '/home/me', workdir: '/ws' };

function checkpoint(run: string, step: number): Checkpoint {
  const path = `/runs/${run}/checkpoints/global_step_${step}`;
  return {
    host: 'gpu1',
    path,
    root: `/runs/${run}/checkpoints`,
    framework: 'verl',
    step,
    sizeBytes: 0,
    mtimeMs: 0,
    ageMs: 0,
    latest: true,
    kind: 'verl-fsdp',
    parts: [],
  };
}

/** A run as read from its folder; resumed from `from` at `step` when given (its spec from "Resume from Checkpoint"). */
function run(id: string, o: { reward?: string; judgeModel?: string; from?: [string, number] } = {}): RunProvenance {
  const reward = o.reward ?? 'def compute_score(*a):\n    return 1.0\n';
  const specText = o.from ? resumeSpecText(SPEC, checkpoint(...o.from)).text : SPEC;
  const spec = loadYamlWithSchema(specText, runSpecSchema, 'spec.yaml');
  const manifest = buildProvenance({
    id,
    dir: `/runs/${id}`,
    specText,
    workspace: '/ws',
    now: new Date('2026-01-01T00:00:00Z'),
    reward: { main: 'exact.py', function: 'compute_score', files: { 'exact.py': reward } },
    facts: FACTS,
    uses: {
      services: {},
      judges: {
        judge: judgeUse(o.judgeModel),
      },
    },
    resumedFrom: resumedFrom(spec, DIRS),
  });
  const record = {
    id,
    name: spec.name,
    kind: 'train',
    framework: 'verl',
    algorithm: 'grpo',
    host: 'gpu1',
    scheduler: 'ssh',
    created: '2026-01-01T00:00:00Z',
    dir: `/runs/${id}`,
  } as const;
  return { host: 'gpu1', record, manifest: provenanceSchema.parse(manifest), rewardText: { 'exact.py': reward } };
}

/** Reads runs by folder from a map, as the host would; a folder not in it is gone. */
function reader(runs: RunProvenance[]): ReadResumedRun & { reads: string[] } {
  const reads: string[] = [];
  const read = async (r: { id: string; dir: string }) => {
    reads.push(r.id);
    const p = runs.find((x) => x.record.dir === r.dir);
    if (!p) throw new Error(`gpu1: no such file or folder: ${r.dir}/run.json`);
    return p;
  };
  return Object.assign(read, { reads });
}

describe('resumedFrom (the manifest field, from the spec "Resume from Checkpoint" writes)', () => {
  it('names the checkpoint, its step and the run whose folder holds it; a fresh spec has none', () => {
    const spec = loadYamlWithSchema(resumeSpecText(SPEC, checkpoint('a-1', 120)).text, runSpecSchema, 'spec.yaml');
    const expected: ResumedFrom = { checkpoint: '/runs/a-1/checkpoints/global_step_120', step: 120, run: { id: 'a-1', dir: '/runs/a-1' } };
    assert.deepEqual(resumedFrom(spec, DIRS), expected);
    assert.equal(resumedFrom(loadYamlWithSchema(SPEC, runSpecSchema, 'spec.yaml'), DIRS), undefined);
  });

  it('TRL: a checkpoint-N folder in a run output/ is named; resume_from_checkpoint: true (the latest) names no folder', () => {
    const trl = (v: unknown) => ({ framework: 'trl', overrides: { resume_from_checkpoint: v } }) as unknown as RunSpec;
    assert.deepEqual(resumedFrom(trl('~/runs/b-2/output/checkpoint-30'), DIRS), {
      checkpoint: '/home/me/runs/b-2/output/checkpoint-30',
      step: 30,
      run: { id: 'b-2', dir: '/home/me/runs/b-2' },
    });
    assert.deepEqual(resumedFrom(trl('ckpts/step-x'), DIRS), { checkpoint: '/ws/ckpts/step-x', step: null, run: null });
    assert.equal(resumedFrom(trl(true), DIRS), undefined);
  });

  it('a manifest written before the field reads as one that did not resume', () => {
    const { resumedFrom: _gone, ...old } = run('c', { from: ['b', 1] }).manifest as Record<string, unknown>;
    assert.equal(provenanceSchema.safeParse(old).success, true);
  });
});

describe('resumeChanges', () => {
  it('a chain of 3 resumes: the reward changed at the 2nd, the judge model at the 3rd; a resume that changed neither gets no point', async () => {
    const a = run('a');
    const b = run('b', { from: ['a', 50] });
    const c = run('c', { from: ['b', 120], reward: 'def compute_score(*a):\n    return 0.5\n' });
    const d = run('d', { from: ['c', 200], reward: 'def compute_score(*a):\n    return 0.5\n', judgeModel: 'Llama-3.3-70B' });
    const read = reader([a, b, c]);
    const r = await resumeChanges(d, read);
    assert.deepEqual(r, {
      points: [
        { step: 120, run: 'c', from: 'b', what: ['reward.files.exact.py'] },
        { step: 200, run: 'd', from: 'c', what: ['judges.judge.model'] },
      ],
      notes: [],
    });
    assert.deepEqual(read.reads, ['c', 'b', 'a']);
    assert.equal(changePointText(r.points[0]!), 'step 120: reward file exact.py changed (c resumed from b)');
    assert.equal(changePointText(r.points[1]!), "step 200: judge judge's model changed (d resumed from c)");
    // The first run in the chain did not resume: nothing to walk.
    assert.deepEqual(await resumeChanges(a, read), { points: [], notes: [] });
  });

  it('a parent without a manifest is compared by its reward and named in a note; a parent that is gone stops the walk with a note', async () => {
    const a = run('a');
    const old: RunProvenance = { ...a, manifest: { spec: a.manifest.spec, reward: a.manifest.reward }, note: NO_MANIFEST };
    const b = run('b', { from: ['a', 10], reward: 'def compute_score(*a):\n    return 0.0\n', judgeModel: 'other' });
    assert.deepEqual(await resumeChanges(b, reader([old])), {
      points: [{ step: 10, run: 'b', from: 'a', what: ['reward.files.exact.py'] }],
      notes: [`a: ${NO_MANIFEST}: only its reward was compared with b's`],
    });
    const gone = await resumeChanges(b, reader([]));
    assert.deepEqual(gone.points, []);
    assert.deepEqual(gone.notes, ['b resumed from a (/runs/a), which cannot be read: gpu1: no such file or folder: /runs/a/run.json']);
  });

  it('a loop of resumes (a folder reused) stops with a note instead of walking forever', async () => {
    const a = run('a', { from: ['b', 5] });
    const b = run('b', { from: ['a', 7], reward: 'x = 1\n' });
    const r = await resumeChanges(b, reader([a, b]));
    assert.deepEqual(r.points, [{ step: 7, run: 'b', from: 'a', what: ['reward.files.exact.py'] }]);
    assert.deepEqual(r.notes, ['a resumed from b, which is already in its chain of resumes (a loop): stopped there']);
  });
});
