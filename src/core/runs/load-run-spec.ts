import { readFile } from 'node:fs/promises';
import { parseYamlWithSchema } from '../config/yaml-document';
import { LocatedError, type Problem } from '../errors/located-error';
import { runSpecSchema, type RunSpec } from './run-spec';

interface LoadedRunSpec {
  file: string;
  text: string;
  spec: RunSpec | undefined;
  problems: Problem[];
}

export function parseRunSpec(text: string, file: string): LoadedRunSpec {
  const { value, problems } = parseYamlWithSchema(text, runSpecSchema, file);
  return { file, text, spec: value, problems };
}

/** Reads and validates a run spec; every schema problem has its line. Throws a LocatedError when it is not valid. */
export async function requireRunSpec(file: string): Promise<{ file: string; text: string; spec: RunSpec }> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new LocatedError(`cannot read ${file}`, [
      { file, severity: 'error', message: err.code === 'ENOENT' ? 'file not found' : String(err) },
    ]);
  });
  const loaded = parseRunSpec(text, file);
  if (!loaded.spec)
    throw new LocatedError(
      `${file} is not a valid run spec`,
      loaded.problems.filter((p) => p.severity === 'error'),
    );
  return { file, text, spec: loaded.spec };
}
