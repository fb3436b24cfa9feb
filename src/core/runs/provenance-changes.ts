import { errorMessage } from '../errors/located-error';
import { diffProvenance } from './provenance-diff';
import type { RunProvenance } from './read-provenance';

/** A step where what scores a run changed: a run resumed there from a run made with another reward, judge or service. */
export interface ChangePoint {
  step: number;
  /** The run that resumed, and the run whose checkpoint it resumed from. */
  run: string;
  from: string;
  /** diffProvenance's paths that changed: reward.files.<name>, spec.reward.*, judges.<name>.<field>, services.<name>.<field>. */
  what: string[];
}

export interface ResumeChanges {
  /** By step, earliest first. */
  points: ChangePoint[];
  /** Why the walk stopped short or compared less (a run without a manifest, a folder that cannot be read, a loop). */
  notes: string[];
}

/** What scores the rollouts: the reward (its files, the spec's reward) and the judges' and services' models and settings. */
const SCORING =
  /^(reward\.files\.|spec\.reward(\.|$)|judges\.[^.]+\.(judge|model|promptSha256|parser|temperature)$|services\.[^.]+\.(model|servedName)$)/;

/** Reads a run named by a manifest's resumedFrom (its folder is on the same host as the run that resumed from it). */
export type ReadResumedRun = (run: { id: string; dir: string }) => Promise<RunProvenance>;

/**
 * The steps where a run's reward or judges changed along its chain of resumes: the run, the run it resumed from, that
 * run's own parent, and so on, each compared with diffProvenance to the one it resumed into, at the step it resumed
 * from. Stops at a run that did not resume (or predates the record of it), a folder that cannot be read or a loop, with a note.
 */
export async function resumeChanges(start: RunProvenance, read: ReadResumedRun): Promise<ResumeChanges> {
  const points: ChangePoint[] = [];
  const notes: string[] = [];
  const seen = new Set([start.record.dir]);
  for (let child = start; ;) {
    const from = child.manifest.resumedFrom;
    if (!from) break;
    const id = child.record.id;
    if (!from.run) {
      notes.push(`${id} resumed from ${from.checkpoint}, which is not in a run folder: what made it is not known`);
      break;
    }
    if (seen.has(from.run.dir)) {
      notes.push(`${id} resumed from ${from.run.id}, which is already in its chain of resumes (a loop): stopped there`);
      break;
    }
    seen.add(from.run.dir);
    let parent: RunProvenance;
    try {
      parent = await read(from.run);
    } catch (err) {
      notes.push(`${id} resumed from ${from.run.id} (${from.run.dir}), which cannot be read: ${errorMessage(err)}`);
      break;
    }
    if (parent.note) notes.push(`${parent.record.id}: ${parent.note}: only its reward was compared with ${id}'s`);
    const what = diffProvenance(parent, child)
      .map((d) => d.path)
      .filter((p) => SCORING.test(p));
    if (what.length && from.step === null)
      notes.push(`${id} resumed from ${from.checkpoint}, whose name gives no step: ${what.join(', ')} changed there`);
    else if (what.length) points.push({ step: from.step!, run: id, from: parent.record.id, what });
    child = parent;
  }
  return { points: points.sort((a, b) => a.step - b.step), notes };
}

/** A changed path in words: `reward file x.py`, `judge judge's model`, `service policy's model`, `spec reward.function`. */
function pathText(path: string): string {
  const file = /^reward\.files\.(.+)$/.exec(path);
  if (file) return `reward file ${file[1]}`;
  const use = /^(judges|services)\.([^.]+)\.(.+)$/.exec(path);
  if (use) return `${use[1] === 'judges' ? 'judge' : 'service'} ${use[2]}'s ${use[3] === 'promptSha256' ? 'prompt' : use[3]}`;
  return path.replace(/^spec\./, 'spec ');
}

/** One line per change point: `step 120: reward file x.py changed (run-c resumed from run-b)`. */
export function changePointText(p: ChangePoint): string {
  return `step ${p.step}: ${p.what.map(pathText).join(', ')} changed (${p.run} resumed from ${p.from})`;
}
