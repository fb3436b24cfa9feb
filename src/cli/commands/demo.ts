import { resolve } from 'node:path';
import type { Command } from '../command';
import { printJson, printLines } from '../command';
import { createDemo } from '../../core/demo/create-demo';
import { packageRoot } from '../../core/package-root';
import { shellQuote } from '../../core/remote/shell-quote';

export const demoCommand: Command = {
  path: ['demo'],
  summary: 'Create the demo workspace (local host, real medical data samples, example run specs)',
  usage: 'medrl demo [DIR] [--json]',
  details: 'DIR defaults to ./medrl-demo. An existing demo folder is refreshed; any other non-empty folder is refused.',
  async run(ctx) {
    const dir = resolve(ctx.cwd, ctx.positionals[0] ?? 'medrl-demo');
    const result = await createDemo(packageRoot(__dirname), dir);
    if (ctx.json) printJson(ctx, result);
    else
      printLines(ctx, [
        `${result.refreshed ? 'refreshed' : 'created'} the demo workspace in ${dir} (${result.files.length} files)`,
        `open it: code ${dir}`,
        `to submit its runs from the command line, trust it: medrl trust ${shellQuote(dir)}`,
      ]);
    return 0;
  },
};
