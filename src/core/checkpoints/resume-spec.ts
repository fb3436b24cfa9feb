import { posix } from 'node:path';
import { parseDocument } from 'yaml';
import type { Host } from '../remote/host';
import { HostFileNotFoundError } from '../remote/host';
import { loadYamlWithSchema } from '../config/yaml-document';
import { runSpecSchema } from '../runs/run-spec';
import { trainerFor } from '../runs/trainers';
import type { Checkpoint } from './checkpoint';

/** The run's spec.yaml text from its run folder on the host. */
export async function readRunSpecText(host: Host, runDir: string): Promise<string> {
  return (await host.readFile(posix.join(runDir, 'spec.yaml'))).toString('utf8');
}

/** The run's base model when it is a folder path on the host (a hub id has no folder to copy config files from). */
export async function baseModelFolder(host: Host, ck: Checkpoint): Promise<string | undefined> {
  if (!ck.run) return undefined;
  let text: string;
  try {
    text = await readRunSpecText(host, ck.run.dir);
  } catch (err) {
    if (err instanceof HostFileNotFoundError) return undefined;
    throw err;
  }
  const model: unknown = parseDocument(text).get('model');
  return typeof model === 'string' && (model.startsWith('/') || model.startsWith('~/')) ? model : undefined;
}

/**
 * The file name (without .yaml) a spec named `name` is written to under configs/: a run's name comes from its spec.yaml
 * on the host, which anyone who could write the run folder chose, so it must not name a path (`../../.bashrc`).
 */
export function specFileStem(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '') || 'run';
}

/**
 * A new run spec cloned from the run's spec that resumes from this checkpoint, with the trainer's resume overrides
 * (verl `trainer.resume_mode=resume_path trainer.resume_from_path=<global_step_N>`, TRL `resume_from_checkpoint`).
 * Comments and key order of the original are kept; the result is validated against the run-spec schema.
 */
export function resumeSpecText(specText: string, ck: Checkpoint, file = 'spec.yaml'): { name: string; stem: string; text: string } {
  const spec = loadYamlWithSchema(specText, runSpecSchema, file);
  const doc = parseDocument(specText);
  const name = `${spec.name.replace(/-resume-step\d+$/, '')}-resume-step${ck.step}`;
  doc.set('name', name);
  for (const [key, value] of Object.entries(trainerFor(ck.framework).resumeOverrides(ck.path))) doc.setIn(['overrides', key], value);
  doc.commentBefore = ` Resumes ${spec.name} from step ${ck.step}: ${ck.host}:${ck.path}${doc.commentBefore ? `\n${doc.commentBefore}` : ''}`;
  const text = doc.toString();
  loadYamlWithSchema(text, runSpecSchema, file);
  return { name, stem: specFileStem(name), text };
}
