import { resolve } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import type { Command } from '../command';
import { printJson, printLines } from '../command';
import { CONFIG_FILE_NAME, loadWorkspaceConfig } from '../../core/config/load-workspace-config';
import { formatProblem } from '../../core/errors/located-error';
import { STARTER_CONFIG } from '../../core/config/starter-config';
import { workspaceHosts } from '../../core/config/workspace-config';

export const configCheckCommand: Command = {
  path: ['config', 'check'],
  summary: 'Validate medrl.yaml: every problem with its line and field',
  usage: 'medrl config check [FILE_OR_DIR] [--json]',
  details: 'FILE_OR_DIR defaults to the current folder. Exit code 1 when the file has errors.',
  async run(ctx) {
    const loaded = await loadWorkspaceConfig(resolve(ctx.cwd, ctx.positionals[0] ?? '.'));
    const ok = loaded.config !== undefined;
    if (ctx.json) {
      printJson(ctx, {
        file: loaded.file,
        ok,
        problems: loaded.problems,
        hosts: loaded.config ? workspaceHosts(loaded.config).map((h) => h.name) : [],
      });
    } else {
      printLines(ctx, loaded.problems.map(formatProblem));
      printLines(ctx, [
        ok
          ? `${loaded.file}: ok (${workspaceHosts(loaded.config!).length} host(s), ${Object.keys(loaded.config!.judges).length} judge(s), ${loaded.config!.datasets.length} dataset root(s))`
          : `${loaded.file}: ${loaded.problems.filter((p) => p.severity === 'error').length} error(s)`,
      ]);
    }
    return ok ? 0 : 1;
  },
};

export const initCommand: Command = {
  path: ['init'],
  summary: 'Write a starter medrl.yaml (the local host, nothing else)',
  usage: 'medrl init [DIR] [--json]',
  async run(ctx) {
    const file = resolve(ctx.cwd, ctx.positionals[0] ?? '.', CONFIG_FILE_NAME);
    if (existsSync(file)) throw new Error(`${file} exists already: nothing written`);
    await writeFile(file, STARTER_CONFIG, { flag: 'wx' });
    if (ctx.json) printJson(ctx, { file });
    else printLines(ctx, [`wrote ${file}`]);
    return 0;
  },
};
