import { resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { UsageError, printError, printJson, printLines, type Command, type CommandContext } from '../command';
import { listCheckpoints, findCheckpoint } from '../../core/checkpoints/list-checkpoints';
import { headlineMetric } from '../../core/checkpoints/headline-metrics';
import { startMerge, waitForMerge } from '../../core/checkpoints/merge-checkpoint';
import { baseModelFolder } from '../../core/checkpoints/resume-spec';
import { download } from '../../core/checkpoints/download';
import type { Checkpoint } from '../../core/checkpoints/checkpoint';
import { formatBytes } from '../../core/format/bytes';
import { formatAge } from '../../core/format/age';
import { pickHost, openWorkspaceHosts } from './workspace-hosts';
import { requireTrust } from '../workspace-trust';

const hostOptions = { host: { type: 'string' as const }, config: { type: 'string' as const, short: 'c' } };

function stepOption(ctx: CommandContext): number | undefined {
  const s = ctx.values.step as string | undefined;
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s)) throw new UsageError(`--step takes a step number, not "${s}"`);
  return Number(s);
}

function checkpointLine(c: Checkpoint): string {
  const m = headlineMetric(c.metrics, c.framework);
  return [
    `${c.framework === 'verl' ? 'global_step' : 'checkpoint'} ${String(c.step).padStart(6)}`,
    c.kind.padEnd(13),
    formatBytes(c.sizeBytes).padStart(9),
    `${formatAge(c.ageMs)} ago`.padStart(11),
    c.latest ? 'latest' : '      ',
    m ? `${m.key}=${m.value.toPrecision(4)}` : '',
    c.path,
  ].join('  ');
}

export const checkpointsCommand: Command = {
  path: ['checkpoints'],
  summary: 'List the checkpoints of runs (verl global_step_N, TRL checkpoint-N) on the hosts',
  usage: 'medrl checkpoints [RUN|PATH] [--host H] [--config FILE_OR_DIR] [--json]',
  details:
    'Without RUN|PATH: every run under the runs folder of every host (or of --host). RUN is a run id; PATH a run folder,\nan output folder (verl default_local_dir, TRL output_dir) or one checkpoint folder on the host.',
  options: hostOptions,
  async run(ctx) {
    if (ctx.positionals.length > 1) throw new UsageError('one RUN or PATH at most');
    const { config, pool, hosts } = await openWorkspaceHosts(ctx);
    const ref = ctx.positionals[0];
    const targets = ctx.values.host || ref ? [pickHost(hosts, config, ctx.values.host as string | undefined)] : hosts;
    try {
      const out = [];
      let problems = 0;
      for (const h of targets) {
        const host = await pool.get(h.name);
        const paths = ref ? [ref.includes('/') || ref.startsWith('~') ? ref : `${h.runsDir.replace(/\/+$/, '')}/${ref}`] : [];
        const d = await listCheckpoints(host, ref ? { paths } : { runsDir: h.runsDir });
        if (ref && d.missing.length)
          throw new Error(`${h.name}: ${ref.includes('/') ? `no such folder: ${ref}` : `no run "${ref}" in ${h.runsDir}`}`);
        out.push({ host: h.name, ...d });
        problems += d.runs.filter((r) => r.problem).length;
      }
      if (ctx.json) {
        printJson(ctx, out);
        return problems ? 1 : 0;
      }
      const lines: string[] = [];
      for (const h of out) {
        for (const r of h.runs) {
          if (r.problem) printError(ctx, `warning: ${r.problem}`);
          if (!r.checkpoints.length) continue;
          lines.push(`${h.host}  ${r.run.name ?? r.run.id}  (${r.run.dir})`);
          lines.push(...r.checkpoints.map((c) => `  ${checkpointLine(c)}`));
        }
        if (h.loose.length) lines.push(`${h.host}`, ...h.loose.map((c) => `  ${checkpointLine(c)}`));
      }
      printLines(ctx, lines.length ? lines : ['no checkpoints found']);
      return problems ? 1 : 0;
    } finally {
      await pool.dispose();
    }
  },
};

export const mergeCommand: Command = {
  path: ['merge'],
  summary: 'Merge a verl checkpoint (FSDP or Megatron shards) into a HuggingFace model folder on its host',
  usage: 'medrl merge CHECKPOINT [--step N] [--target DIR] [--base-model DIR] [--host H] [--json]',
  details:
    "CHECKPOINT: a run id, run folder or global_step_N folder on the host (--step picks the step; default the latest).\nRuns `python3 -m verl.model_merger merge` (or the legacy scripts/model_merger.py in the host's workdir) as a tracked\nmerge run, then copies the base model's *.json files missing in the target. Default target: global_step_N/huggingface.",
  options: { ...hostOptions, step: { type: 'string' }, target: { type: 'string' }, 'base-model': { type: 'string' } },
  async run(ctx) {
    if (ctx.positionals.length !== 1) throw new UsageError('give one CHECKPOINT');
    const { file, config, pool, hosts } = await openWorkspaceHosts(ctx);
    const h = pickHost(hosts, config, ctx.values.host as string | undefined);
    try {
      await requireTrust(file, 'medrl merge');
      const host = await pool.get(h.name);
      const ck = await findCheckpoint(host, h.runsDir, ctx.positionals[0]!, stepOption(ctx));
      const baseModel = (ctx.values['base-model'] as string | undefined) ?? (await baseModelFolder(host, ck));
      const job = await startMerge(host, ck, h.runsDir, {
        targetDir: ctx.values.target as string | undefined,
        baseModel,
        workdir: h.workdir,
        setup: h.setup,
        env: h.env,
      });
      ctx.stderr.write(`merging ${h.name}:${ck.path} (run ${job.id}, log ${job.dir}/output.log)\n`);
      const target = await waitForMerge(host, job, (p) =>
        printError(ctx, `${p.fraction !== undefined ? `${Math.round(p.fraction * 100)}% ` : ''}${p.message}`),
      );
      if (ctx.json) printJson(ctx, { host: h.name, checkpoint: ck.path, target, run: job.id });
      else printLines(ctx, [target]);
      return 0;
    } finally {
      await pool.dispose();
    }
  },
};

export const downloadCommand: Command = {
  path: ['download'],
  summary: 'Download a checkpoint from its host (parallel, resumable, sha256-checked)',
  usage: 'medrl download CHECKPOINT DEST [--step N] [--host H] [--json]',
  details:
    'CHECKPOINT: a run id, run folder or checkpoint folder on the host (--step picks the step; default the latest).\nDEST: a local folder; the checkpoint lands in DEST/<global_step_N|checkpoint-N>. Run the same command again after a\ndropped connection or Ctrl-C: it continues from the bytes already verified.',
  options: { ...hostOptions, step: { type: 'string' } },
  async run(ctx) {
    if (ctx.positionals.length !== 2) throw new UsageError('give CHECKPOINT and DEST');
    const { config, pool, hosts } = await openWorkspaceHosts(ctx);
    const h = pickHost(hosts, config, ctx.values.host as string | undefined);
    const ac = new AbortController();
    const onSigint = () => ac.abort();
    process.once('SIGINT', onSigint);
    try {
      const host = await pool.get(h.name);
      const ck = await findCheckpoint(host, h.runsDir, ctx.positionals[0]!, stepOption(ctx));
      const destDir = resolve(ctx.cwd, ctx.positionals[1]!);
      if (existsSync(destDir) && !statSync(destDir).isDirectory()) throw new UsageError(`DEST ${destDir} is a file: give a folder`);
      const dest = join(destDir, basename(ck.path));
      let shown = 0;
      const r = await download(host, ck.path, dest, {
        signal: ac.signal,
        onProgress: (p) => {
          if (ctx.json || Date.now() - shown < 1000) return;
          shown = Date.now();
          ctx.stderr.write(
            `${formatBytes(p.done)} / ${formatBytes(p.total)}  ${p.filesDone}/${p.files} files  ${formatBytes(p.bytesPerSecond)}/s\n`,
          );
        },
        onRetry: (err, n) => ctx.stderr.write(`connection lost (${String(err)}); continuing (attempt ${n})\n`),
      });
      if (ctx.json) printJson(ctx, { host: h.name, checkpoint: ck.path, ...r });
      else
        printLines(ctx, [
          `${r.dest}: ${r.files} file(s), ${formatBytes(r.bytes)} in ${r.seconds.toFixed(1)} s (${formatBytes(r.transferred / Math.max(r.seconds, 0.001))}/s), sha256 verified`,
        ]);
      return 0;
    } finally {
      process.off('SIGINT', onSigint);
      await pool.dispose();
    }
  },
};
