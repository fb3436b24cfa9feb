import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseYamlWithSchema } from './yaml-document';
import { workspaceConfigSchema, type WorkspaceConfig } from './workspace-config';
import { LocatedError, type Problem } from '../errors/located-error';

export const CONFIG_FILE_NAME = 'medrl.yaml';

interface LoadedConfig {
  file: string;
  config: WorkspaceConfig | undefined;
  problems: Problem[];
}

export function parseWorkspaceConfig(text: string, file: string): LoadedConfig {
  const { value, problems } = parseYamlWithSchema(text, workspaceConfigSchema, file);
  return { file, config: value, problems };
}

/** Reads medrl.yaml from a folder (or a file path); a missing file is an error that says where it looked. */
export async function loadWorkspaceConfig(pathOrDir: string): Promise<LoadedConfig> {
  const file = pathOrDir.endsWith('.yaml') || pathOrDir.endsWith('.yml') ? pathOrDir : join(pathOrDir, CONFIG_FILE_NAME);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new LocatedError(
      `cannot read ${file}`,
      [
        {
          file,
          severity: 'error',
          message:
            (err as NodeJS.ErrnoException).code === 'ENOENT'
              ? 'file not found: create it with `medrl init` or open the demo with `medrl demo`'
              : String(err),
        },
      ],
      { cause: err },
    );
  }
  return parseWorkspaceConfig(text, file);
}

/**
 * Writes medrl.yaml (or another config file) atomically: a temporary file beside it, then a rename over it, so a crash
 * or a full disk leaves the old file or the new one, never half of one. The file keeps its permissions.
 */
export async function saveConfigText(file: string, text: string): Promise<void> {
  const mode = await stat(file).then(
    (s) => s.mode & 0o777,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return 0o644;
      throw err;
    },
  );
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, text, { mode });
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Loads and requires a valid config. */
export async function requireWorkspaceConfig(pathOrDir: string): Promise<{ file: string; config: WorkspaceConfig }> {
  const loaded = await loadWorkspaceConfig(pathOrDir);
  if (!loaded.config)
    throw new LocatedError(
      `${loaded.file} is not valid`,
      loaded.problems.filter((p) => p.severity === 'error'),
    );
  return { file: loaded.file, config: loaded.config };
}
