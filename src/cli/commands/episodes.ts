import { resolve } from 'node:path';
import { printError, stdoutPipe, UsageError, type Command } from '../command';
import { terminalText } from '../../core/format/terminal-text';
import { recordPlace } from '../../core/format/row-line';
import { openWorkspace } from '../host-pool';
import { LocalHost } from '../../core/remote/local-host';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { discoverEpisodes } from '../../core/episodes/discover';
import type { Episode } from '../../core/episodes/episode';

function readable(e: Episode, set: string): string {
  const head = `── ${set} step ${e.step} #${e.index}  score ${e.score ?? '–'}${e.dataSource ? `  ${e.dataSource}` : ''}  (${recordPlace(e.location.file, e.location)})`;
  const turns = e.turns.map((t) => `[${t.role}${t.name ? ` ${t.name}` : ''}${t.environment ? ' (environment)' : ''}]\n${t.content}`);
  const gt = `[ground truth] ${typeof e.groundTruth === 'string' ? e.groundTruth : JSON.stringify(e.groundTruth ?? null)}`;
  const extra = Object.keys(e.extra).length ? `[extra] ${JSON.stringify(e.extra)}` : '';
  return [head, ...turns, gt, extra].filter(Boolean).join('\n');
}

export const episodesCommand: Command = {
  path: ['episodes'],
  summary: 'Print the episodes of rollout/validation dumps, TRL completions or trajectories, turn by turn',
  usage: 'medrl episodes PATH [--step N] [--set rollouts|validation|completions] [--host H] [--config FILE_OR_DIR] [--json]',
  details: `PATH is a run folder (its rollouts/, validation/, output/completions/), a folder of {step}.jsonl dumps or
completions_{step}.parquet files, or one .jsonl/.parquet file; on --host H (a host of medrl.yaml) it is read there
through range reads. --json prints one JSON object per line: {set, step, index, score, turns: [{role, content, name?, environment?}], groundTruth, extra}.
Malformed lines are reported on stderr with file and line; the rest is still printed (exit code 1).`,
  options: { step: { type: 'string' }, set: { type: 'string' }, host: { type: 'string' }, config: { type: 'string', short: 'c' } },
  async run(ctx) {
    const [path, ...more] = ctx.positionals;
    if (!path || more.length) throw new UsageError('give one PATH');
    const stepArg = ctx.values.step as string | undefined;
    const step = stepArg === undefined ? undefined : Number(stepArg);
    if (step !== undefined && !Number.isInteger(step)) throw new UsageError(`--step must be an integer, got "${stepArg}"`);
    const hostName = (ctx.values.host as string | undefined) ?? LOCAL_HOST;
    const ws = hostName === LOCAL_HOST ? undefined : await openWorkspace(ctx.cwd, ctx.values.config as string | undefined);
    const host = ws ? await ws.pool.get(hostName) : new LocalHost();
    try {
      const target = ws ? path : resolve(ctx.cwd, path);
      const set = ctx.values.set as string | undefined;
      const collections = (await discoverEpisodes(host, target)).filter((c) => !set || c.name === set);
      if (!collections.length) throw new UsageError(`no "${set}" episodes under ${path}`);
      let malformed = 0;
      let printed = 0;
      // A 1 GB dump never piles up in memory; a closed pipe (| head) ends the listing.
      const out = stdoutPipe(ctx);
      for (const c of collections) {
        for (const f of c.files) {
          if (step !== undefined && f.step !== step) continue;
          for await (const x of f.stream()) {
            if (!out.open) return 0;
            if (!('turns' in x)) {
              malformed++;
              printError(ctx, `${ws ? `${hostName}:` : ''}${recordPlace(x.file, x)}: malformed: ${x.message}`);
              continue;
            }
            printed++;
            if (ctx.json) {
              await out.write(
                `${JSON.stringify({ set: c.name, step: x.step, index: x.index, score: x.score, turns: x.turns.map((t) => ({ role: t.role, content: t.content, name: t.name, environment: t.environment })), groundTruth: x.groundTruth ?? null, extra: x.extra })}\n`,
              );
            } else {
              // Model output may hold escape codes (colours, cursor moves, a window title): shown, never obeyed.
              await out.write(`${terminalText(readable(x, c.name))}\n\n`);
            }
          }
        }
      }
      if (step !== undefined && printed === 0 && malformed === 0) throw new UsageError(`no step ${step} under ${path}`);
      return malformed ? 1 : 0;
    } finally {
      if (!ws) await host.dispose();
      else await ws.pool.dispose();
    }
  },
};
