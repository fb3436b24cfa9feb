import { dirname, resolve } from 'node:path';
import type { Command, CommandContext } from '../command';
import { printError, printJson, printLines, UsageError } from '../command';
import { openWorkspace } from '../host-pool';
import { requireTrust } from '../workspace-trust';
import { findHost, workspaceHosts, type WorkspaceConfig } from '../../core/config/workspace-config';
import { formatProblem } from '../../core/errors/located-error';
import { requireRunSpec } from '../../core/runs/load-run-spec';
import { planRun, submitRun } from '../../core/runs/submit-run';
import { environmentSecrets } from '../../core/submit/run-environment';
import { submitRequest } from '../../core/submit/submit-request';
import { listAllRuns, findRun, findRuns } from '../../core/runs/run-catalog';
import { readRunFolderProvenance, readRunProvenance, type RunProvenance } from '../../core/runs/read-provenance';
import { changePointText, resumeChanges } from '../../core/runs/provenance-changes';
import { diffProvenance } from '../../core/runs/provenance-diff';
import { differenceLines, provenanceLines } from '../../core/runs/provenance-text';
import { RerunRefused, rerunExactly } from '../../core/submit/rerun-exactly';
import { cancelRun } from '../../core/runs/cancel-run';
import { followLog, followRun } from '../../core/runs/follow-log';
import { terminalLogText } from '../../core/format/terminal-text';
import { isActive, RUN_FILES } from '../../core/runs/run-record';
import { elapsedMs, formatDuration, stateLabel, stepLabel } from '../../core/runs/run-summary';
import type { HostPool } from '../../core/remote/host-pool';

const configOption = { config: { type: 'string', short: 'c' } } as const;

async function withWorkspace<T>(
  ctx: CommandContext,
  fn: (ws: { file: string; config: WorkspaceConfig; pool: HostPool }) => Promise<T>,
): Promise<T> {
  const ws = await openWorkspace(ctx.cwd, ctx.values.config as string | undefined);
  try {
    return await fn(ws);
  } finally {
    await ws.pool.dispose();
  }
}

export const submitCommand: Command = {
  path: ['submit'],
  summary: 'Submit a run spec to its host (--dry-run: print the launch script and the host checks)',
  usage: 'medrl submit SPEC [--dry-run] [--host H] [--config FILE_OR_DIR] [--json]',
  details:
    "SPEC: a run spec (configs/*.yaml). The host checks (files, GPUs, framework, scheduler) run first: nothing is written on the host unless they pass.\nThe run gets MEDRL_<NAME>_URL/_MODEL for the spec's services and MEDRL_JUDGE_* for the judge. Secrets are read from this shell's environment and reach the job over stdin (never argv or a file): MEDRL_<NAME>_API_KEY (e.g. MEDRL_JUDGE_API_KEY), HF_TOKEN, and WANDB_API_KEY when the spec has wandb:.",
  options: { ...configOption, 'dry-run': { type: 'boolean' }, host: { type: 'string' } },
  async run(ctx) {
    const specArg = ctx.positionals[0];
    if (!specArg) throw new UsageError('which spec? e.g. medrl submit configs/local-demo.yaml');
    const { file: specFile, text, spec } = await requireRunSpec(resolve(ctx.cwd, specArg));
    return withWorkspace(ctx, async ({ file, config, pool }) => {
      await requireTrust(file, 'medrl submit');
      // Secrets come from this shell's environment (MEDRL_JUDGE_API_KEY, HF_TOKEN, WANDB_API_KEY, ...), never argv or a file.
      const req = await submitRequest({
        spec,
        specText: text,
        specFile,
        config,
        workspaceRoot: dirname(file),
        pool,
        host: ctx.values.host as string | undefined,
        secrets: environmentSecrets(),
      });
      const hostName = req.hostConfig.name;
      if (ctx.values['dry-run']) {
        const { run, problems } = await planRun(req);
        if (ctx.json)
          printJson(ctx, {
            id: run.id,
            dir: run.dir,
            host: hostName,
            scheduler: run.scheduler.name,
            launchScript: run.files[RUN_FILES.launch],
            files: Object.keys(run.files),
            problems,
          });
        else {
          ctx.stdout.write(run.files[RUN_FILES.launch]!);
          printLines(ctx, [`# dry run: would create ${run.dir} on ${hostName} (${run.scheduler.name}); nothing was written`]);
          for (const p of problems) printError(ctx, formatProblem(p));
        }
        return problems.some((p) => p.severity === 'error') ? 1 : 0;
      }
      const { record, warnings } = await submitRun(req);
      if (ctx.json) printJson(ctx, record);
      else {
        for (const p of warnings) printError(ctx, formatProblem(p));
        printLines(ctx, [
          `submitted ${record.id} to ${record.host} (${record.scheduler}${record.jobId ? ` job ${record.jobId}` : record.pid ? ` pid ${record.pid}` : ''})`,
          `run folder: ${record.dir}`,
          `follow it: medrl logs ${record.id} --follow`,
        ]);
      }
      return 0;
    });
  },
};

export const runsCommand: Command = {
  path: ['runs'],
  summary: 'List the runs on every host (one round trip per host)',
  usage: 'medrl runs [--host H] [--config FILE_OR_DIR] [--json]',
  options: { ...configOption, host: { type: 'string' } },
  async run(ctx) {
    return withWorkspace(ctx, async ({ config, pool }) => {
      const only = ctx.values.host as string | undefined;
      const hosts = only ? [findHost(config, only)] : workspaceHosts(config);
      const all = await listAllRuns(pool, hosts);
      if (ctx.json)
        printJson(
          ctx,
          all.map((h) => ({ host: h.host.name, error: h.error, problems: h.problems, runs: h.runs.map(({ logTail: _t, ...r }) => r) })),
        );
      else {
        const rows = all
          .flatMap((h) => h.runs)
          .map((r) => [r.record.id, stateLabel(r), r.host, r.record.scheduler, stepLabel(r), formatDuration(elapsedMs(r)), r.record.name]);
        const head = ['ID', 'STATE', 'HOST', 'SCHEDULER', 'STEP', 'ELAPSED', 'NAME'];
        const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
        printLines(
          ctx,
          rows.length
            ? [head, ...rows].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '))
            : ['no runs'],
        );
      }
      for (const h of all) {
        if (h.error) ctx.stderr.write(`${h.host.name}: ${h.error}\n`);
        for (const p of h.problems) printError(ctx, formatProblem(p));
      }
      return all.some((h) => h.error || h.problems.length) ? 1 : 0;
    });
  },
};

export const cancelCommand: Command = {
  path: ['cancel'],
  summary: 'Cancel a run (kills its process group, scancel, or ray job stop)',
  usage: 'medrl cancel ID [--config FILE_OR_DIR] [--json]',
  details: 'ID: a run id, or a unique prefix of one.',
  options: configOption,
  async run(ctx) {
    const id = ctx.positionals[0];
    if (!id) throw new UsageError('which run? see medrl runs');
    return withWorkspace(ctx, async ({ config, pool }) => {
      const run = await findRun(pool, workspaceHosts(config), id);
      if (!isActive(run.state)) throw new Error(`${run.record.id} is ${stateLabel(run)}: nothing to cancel`);
      await cancelRun(await pool.get(run.host), run.record);
      if (ctx.json) printJson(ctx, { id: run.record.id, host: run.host, cancelled: true });
      else printLines(ctx, [`cancelled ${run.record.id} on ${run.host}`]);
      return 0;
    });
  },
};

export const logsCommand: Command = {
  path: ['logs'],
  summary: "Print a run's output.log (--follow: keep printing while the run is active)",
  usage: 'medrl logs ID [--follow] [--raw] [--config FILE_OR_DIR] [--json]',
  details:
    "ID: a run id, or a unique prefix of one. --json prints one JSON string per line. The log's terminal control sequences (clipboard writes, screen clearing, cursor moves, carriage returns) are shown as escapes like \\x1b, its colours kept; --raw prints the log as it is.",
  options: { ...configOption, follow: { type: 'boolean', short: 'f' }, raw: { type: 'boolean' } },
  async run(ctx) {
    const id = ctx.positionals[0];
    if (!id) throw new UsageError('which run? see medrl runs');
    return withWorkspace(ctx, async ({ config, pool }) => {
      const run = await findRun(pool, workspaceHosts(config), id);
      const host = await pool.get(run.host);
      const lines = ctx.values.follow ? followRun(host, findHost(config, run.host).runsDir, run.record) : followLog(host, run.record.dir);
      const text = ctx.values.raw ? (line: string) => line : terminalLogText;
      for await (const line of lines) ctx.stdout.write(ctx.json ? `${JSON.stringify(line)}\n` : `${text(line)}\n`);
      return 0;
    });
  },
};

export const runsShowCommand: Command = {
  path: ['runs', 'show'],
  summary: "Print a run's record and its provenance manifest (spec, reward code, data, model, environment, git, services, judges)",
  usage: 'medrl runs show ID [--config FILE_OR_DIR] [--json]',
  details:
    'ID: a run id, or a unique prefix of one. --json: {"record": run.json, "manifest": provenance.json, "note": why there is no manifest, "changes": {"points": [{"step", "run", "from", "what"}], "notes"}}. A run submitted before provenance was recorded shows its spec and reward files only. A resumed run also lists each step where its reward or judges changed along the runs it resumed from.',
  options: configOption,
  async run(ctx) {
    const id = ctx.positionals[0];
    if (!id) throw new UsageError('which run? see medrl runs');
    return withWorkspace(ctx, async ({ config, pool }) => {
      const run = await findRun(pool, workspaceHosts(config), id);
      const host = await pool.get(run.host);
      const p = await readRunProvenance(host, run.record);
      // Where the reward or judges changed along the runs it resumed from (read on the same host).
      const changes = await resumeChanges(p, (r) => readRunFolderProvenance(host, r.dir));
      if (ctx.json) printJson(ctx, { record: p.record, manifest: p.manifest, ...(p.note ? { note: p.note } : {}), changes });
      else printLines(ctx, [...provenanceLines(p), ...changes.points.map(changePointText), ...changes.notes]);
      return 0;
    });
  },
};

export const runsDiffCommand: Command = {
  path: ['runs', 'diff'],
  summary: 'Print what differs between two runs: spec keys and overrides, reward code, data, model, environment, services, judges',
  usage: 'medrl runs diff A B [--config FILE_OR_DIR] [--json]',
  details:
    'A, B: run ids or unique prefixes. One line per difference, `path: A\'s value → B\'s`, then a unified diff of each reward file that differs. Ids, run folders and times are not compared. --json: {"differences": [{"path", "a", "b", "diff"?}], "notes": [...]}.',
  options: configOption,
  async run(ctx) {
    const [a, b] = ctx.positionals;
    if (!a || !b) throw new UsageError('which two runs? e.g. medrl runs diff RUN_A RUN_B (see medrl runs)');
    return withWorkspace(ctx, async ({ config, pool }) => {
      const runs = await findRuns(pool, workspaceHosts(config), [a, b]);
      const [pa, pb] = await Promise.all(runs.map(async (r) => readRunProvenance(await pool.get(r.host), r.record)));
      const differences = diffProvenance(pa!, pb!);
      const notes = [pa!, pb!].filter((p): p is RunProvenance & { note: string } => !!p.note).map((p) => `${p.record.id}: ${p.note}`);
      if (ctx.json) printJson(ctx, { differences, notes });
      else printLines(ctx, [...notes, ...differenceLines(differences)]);
      return 0;
    });
  },
};

export const runsRerunCommand: Command = {
  path: ['runs', 'rerun'],
  summary: "Re-run a run exactly: submit its spec again, refused when the host's data, model or versions or the reward files differ",
  usage: 'medrl runs rerun ID [--host H] [--config FILE_OR_DIR] [--json]',
  details:
    'ID: a run id, or a unique prefix of one. Submits the run\'s spec.yaml (as its run folder holds it) to its host (--host: to another host), with the workspace\'s reward files, after measuring the host as at submit and comparing with the run\'s provenance.json: the data\'s sha256, size and rows, the model, the environment\'s versions, the git commit, services, judges and the reward files. Anything that differs refuses the re-run, nothing is written, and each difference is printed as `path: recorded → now` (exit code 1). The new run\'s manifest records rerunOf. --json: {"id", "host", "dir", "rerunOf"}, or {"refused", "rerunOf", "differences"}.',
  options: { ...configOption, host: { type: 'string' } },
  async run(ctx) {
    const id = ctx.positionals[0];
    if (!id) throw new UsageError('which run? see medrl runs');
    return withWorkspace(ctx, async ({ file, config, pool }) => {
      await requireTrust(file, 'medrl runs rerun');
      const run = await findRun(pool, workspaceHosts(config), id);
      const then = await readRunProvenance(await pool.get(run.host), run.record);
      try {
        const { record, rerunOf } = await rerunExactly({
          then,
          config,
          workspaceRoot: dirname(file),
          pool,
          // Secrets come from this shell's environment, as for medrl submit.
          secrets: environmentSecrets(),
          host: ctx.values.host as string | undefined,
        });
        if (ctx.json) printJson(ctx, { id: record.id, host: record.host, dir: record.dir, rerunOf });
        else
          printLines(ctx, [
            `re-ran ${rerunOf.id} exactly as ${record.id} on ${record.host}`,
            `run folder: ${record.dir}`,
            `follow it: medrl logs ${record.id} --follow`,
          ]);
        return 0;
      } catch (err) {
        if (!(err instanceof RerunRefused)) throw err;
        if (ctx.json) printJson(ctx, { refused: err.summary, rerunOf: err.rerunOf, differences: err.differences });
        else for (const line of [err.summary, ...err.lines()]) printError(ctx, line);
        return 1;
      }
    });
  },
};
