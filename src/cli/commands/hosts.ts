import { resolve } from 'node:path';
import type { Command } from '../command';
import { printJson, printLines } from '../command';
import { requireWorkspaceConfig } from '../../core/config/load-workspace-config';
import { resolveHosts } from '../../core/config/workspace-config';

export const hostsListCommand: Command = {
  path: ['hosts', 'list'],
  summary: 'List the hosts of the workspace (medrl.yaml)',
  usage: 'medrl hosts list [--config FILE_OR_DIR] [--json]',
  options: { config: { type: 'string', short: 'c' } },
  async run(ctx) {
    const { config } = await requireWorkspaceConfig(resolve(ctx.cwd, (ctx.values.config as string | undefined) ?? '.'));
    const hosts = resolveHosts(config);
    if (ctx.json) printJson(ctx, hosts);
    else printLines(ctx, hosts.map((h) => `${h.name.padEnd(16)} ${h.kind === 'local' ? 'local processes' : `ssh ${h.sshAlias}`}  scheduler=${h.scheduler}  runs=${h.runsDir}`));
    return 0;
  },
};
