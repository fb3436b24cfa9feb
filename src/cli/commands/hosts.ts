import { resolve } from 'node:path';
import type { Command, CommandContext } from '../command';
import { printJson, printLines, UsageError } from '../command';
import { requireWorkspaceConfig } from '../../core/config/load-workspace-config';
import { workspaceHosts, type ResolvedHost } from '../../core/config/workspace-config';
import { formatBytes } from '../../core/format/bytes';
import { formatProblem } from '../../core/errors/located-error';
import { checkEnvironment } from '../../core/remote/env-check';
import { queryHostStatus } from '../../core/runs/host-status';
import type { Host } from '../../core/remote/host';
import { shellJoin } from '../../core/remote/shell-quote';
import { openWorkspace } from '../host-pool';
import { pickHost } from './workspace-hosts';
import { requireTrust } from '../workspace-trust';

export const hostsListCommand: Command = {
  path: ['hosts', 'list'],
  summary: 'List the hosts of the workspace (medrl.yaml)',
  usage: 'medrl hosts list [--config FILE_OR_DIR] [--json]',
  options: { config: { type: 'string', short: 'c' } },
  async run(ctx) {
    const { config } = await requireWorkspaceConfig(resolve(ctx.cwd, (ctx.values.config as string | undefined) ?? '.'));
    const hosts = workspaceHosts(config);
    if (ctx.json) printJson(ctx, hosts);
    else
      printLines(
        ctx,
        hosts.map(
          (h) =>
            `${h.name.padEnd(16)} ${h.kind === 'local' ? 'local processes' : `ssh ${h.sshAlias}`}  scheduler=${h.scheduler}  runs=${h.runsDir}`,
        ),
      );
    return 0;
  },
};

/**
 * Opens the workspace, finds the host named by the first positional, runs `fn` on it, then closes the connection.
 * `runsSetup` names a command that runs the host's setup and env lines: refused in an untrusted workspace.
 */
async function withHost<T>(
  ctx: CommandContext,
  runsSetup: string | undefined,
  fn: (host: Host, entry: ResolvedHost) => Promise<T>,
): Promise<T> {
  const name = ctx.positionals[0];
  if (!name) throw new UsageError('which host? give its name from medrl.yaml');
  const { file, config, pool } = await openWorkspace(ctx.cwd, ctx.values.config as string | undefined);
  const entry = pickHost(workspaceHosts(config), config, name);
  try {
    if (runsSetup) await requireTrust(file, runsSetup, entry);
    return await fn(await pool.get(name), entry);
  } finally {
    await pool.dispose();
  }
}

export const hostsStatusCommand: Command = {
  path: ['hosts', 'status'],
  summary: 'GPUs, their processes, free disk and active runs of a host (one round trip)',
  usage: 'medrl hosts status HOST [--config FILE_OR_DIR] [--json]',
  options: { config: { type: 'string', short: 'c' } },
  async run(ctx) {
    return withHost(ctx, 'medrl hosts status', async (host, entry) => {
      const s = await queryHostStatus(host, entry);
      if (ctx.json) printJson(ctx, { host: host.name, ...s });
      else {
        const lines = [`${host.name}: ${s.gpus.length} GPU(s)${s.gpuError ? ` (${s.gpuError})` : ''}`];
        for (const g of s.gpus) {
          const procs = s.processes.filter((p) => p.gpuUuid === g.uuid).map((p) => `${p.name}[${p.pid}] ${p.usedMemoryMiB ?? '?'} MiB`);
          lines.push(
            `  GPU ${g.index} ${g.name}: ${g.memoryUsedMiB ?? '?'}/${g.memoryTotalMiB ?? '?'} MiB, ${g.utilizationPercent ?? '?'}% used${procs.length ? `, ${procs.join(', ')}` : ''}`,
          );
        }
        if (s.disk) lines.push(`  disk: ${formatBytes(s.disk.availableBytes)} free of ${formatBytes(s.disk.totalBytes)} (${s.disk.path})`);
        lines.push(`  runs: ${s.activeRuns.length} active of ${s.runCount}${s.activeRuns.length ? `: ${s.activeRuns.join(', ')}` : ''}`);
        lines.push(...s.problems.map(formatProblem));
        printLines(ctx, lines);
      }
      return s.problems.some((p) => p.severity === 'error') ? 1 : 0;
    });
  },
};

export const hostsCheckCommand: Command = {
  path: ['hosts', 'check'],
  summary: 'Python, CUDA, driver, torch, vLLM, SGLang, verl, TRL ... versions and GPU count of a host, with known bad combinations',
  usage: 'medrl hosts check HOST [--config FILE_OR_DIR] [--json]',
  details:
    'Runs one python3 script (standard library only) on the host after its setup lines (a host with setup or env lines needs a trusted workspace: medrl trust). Exit code 1 when there are warnings.',
  options: { config: { type: 'string', short: 'c' } },
  async run(ctx) {
    return withHost(ctx, 'medrl hosts check', async (host, entry) => {
      const r = await checkEnvironment(host, entry);
      if (ctx.json) printJson(ctx, r);
      else {
        printLines(ctx, [
          `${r.host}: Python ${r.python} (${r.executable}), CUDA ${r.cuda ?? 'none'}, driver ${r.driver ?? 'none'}, ${r.gpuCount} GPU(s)`,
          ...Object.entries(r.packages).map(([name, v]) => `  ${name.padEnd(14)} ${v ?? '-'}`),
          ...r.warnings.map((w) => `warning: ${w}`),
        ]);
      }
      return r.warnings.length ? 1 : 0;
    });
  },
};

export const execCommand: Command = {
  path: ['exec'],
  summary: "Run a command on a host (its output and exit code are the command's)",
  usage: 'medrl exec HOST [--config FILE_OR_DIR] [--json] -- CMD [ARG...]',
  details: 'Every word after -- is quoted for the remote shell, so `medrl exec gpu -- ls "my dir"` lists one folder.',
  options: { config: { type: 'string', short: 'c' } },
  async run(ctx) {
    if (ctx.rest.length === 0) throw new UsageError('no command: put it after --');
    return withHost(ctx, undefined, async (host) => {
      const r = await host.exec(shellJoin(ctx.rest));
      if (ctx.json) printJson(ctx, { host: host.name, ...r });
      else {
        ctx.stdout.write(r.stdout);
        ctx.stderr.write(r.stderr);
      }
      return r.code ?? 1;
    });
  },
};
