import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { errorMessage, LocatedError, type Problem } from '../errors/located-error';
import type { ResolvedHost } from '../config/workspace-config';
import type { RunSpec } from './run-spec';
import { makeRunId } from './run-id';
import { RUN_FILES, RUN_MARKER_TOKEN, type RunRecord } from './run-record';
import { asList, hostPath, modelPath, type HostDirs } from './host-paths';
import { trainerFor } from './trainers';
import { launchEnv, NO_RUN_ENV, renderJobScript, renderLaunchScript, secretsInput, type RunEnv } from './launch-script';
import { checkHost, type NeededFile } from './host-checks';
import { schedulerFor } from './schedulers';
import { rewardUpload, type RewardUpload } from './reward-files';
import { checkRewardContract } from './reward-contract';
import type { Scheduler } from './scheduler';
import { buildProvenance, provenanceSchema, type Provenance, type ResumedFrom } from './provenance';
import { collectHostFacts } from './provenance-host';
import { resumedFrom } from './resumed-from';

/** Everything a submit needs: the spec (and its text, kept as spec.yaml), where it came from, and the host. */
export interface SubmitRequest {
  spec: RunSpec;
  specText: string;
  /** The spec's file, for problem locations. */
  specFile: string;
  /** The local workspace folder: the reward file's path is relative to it. */
  workspaceRoot: string;
  host: Host;
  hostConfig: ResolvedHost;
  /** Services env (MEDRL_<NAME>_URL/_MODEL, API keys): the one place a run gets env from outside its spec. */
  runEnv?: RunEnv;
  now?: Date;
}

/** A run ready to be written to its host: its id, folder, record and every file of its folder. */
interface PreparedRun {
  id: string;
  dir: string;
  workdir: string;
  record: RunRecord;
  /** File name in the run folder → content (spec.yaml, launch.sh, job.sh, scheduler files, the reward file). */
  files: Record<string, string>;
  scheduler: Scheduler;
  setup: string[];
  neededFiles: NeededFile[];
  /** The reward function's files (the function's and its local imports), when the reward is a function. */
  reward?: RewardUpload;
  /** The agent loop file and its imports (rollout.agentLoop), read once like the reward's. */
  agentLoop?: RewardUpload;
  /** The checkpoint the spec's resume overrides name, for the manifest. */
  resumedFrom?: ResumedFrom;
}

/** What a run is prepared with beyond its request: an id, the trainer version on the host, a reward upload already read. */
interface PrepareOptions {
  id?: string;
  version?: string;
  reward?: RewardUpload;
  agentLoop?: RewardUpload;
}

/** The variables launch.sh gets from outside the trainer: medrl.yaml's host env, then the spec's, then the run's services. */
function runVars(req: SubmitRequest): Record<string, string> {
  return { ...req.hostConfig.env, ...req.spec.env, ...(req.runEnv ?? NO_RUN_ENV).vars };
}

/** Where the run's relative paths land on its host: `~` and the workdir (the spec's, the host's, else the workspace or home). */
async function runHostDirs(req: SubmitRequest): Promise<HostDirs> {
  const home = await req.host.resolvePath('~');
  const workdirSpec = req.spec.workdir ?? req.hostConfig.workdir ?? (req.host.kind === 'local' ? req.workspaceRoot : '~');
  return { home, workdir: hostPath(workdirSpec, { home, workdir: home }) };
}

/** The data files (data.train and data.val) a run would read, as paths on its host. */
export async function runDataFiles(req: SubmitRequest): Promise<string[]> {
  const dirs = await runHostDirs(req);
  return [...asList(req.spec.data.train), ...asList(req.spec.data.val)].map((p) => hostPath(p, dirs));
}

/** Builds the run (id, folder, launch.sh) without touching the host beyond resolving `~`: what --dry-run shows. */
export async function prepareRun(req: SubmitRequest, opts: PrepareOptions = {}): Promise<PreparedRun> {
  const { spec, host, hostConfig } = req;
  const { id = makeRunId(spec.name, req.now), version } = opts;
  const dirs = await runHostDirs(req);
  const { home } = dirs;
  const runsDir = hostPath(hostConfig.runsDir, { home, workdir: home });
  const dir = posix.join(runsDir, id);
  const files: Record<string, string> = { [RUN_FILES.spec]: req.specText };
  let rewardFile: string | undefined;
  let reward: RewardUpload | undefined;
  if (spec.reward && 'path' in spec.reward) {
    // The reward file and the Python files beside it that it imports, layout kept (verl and TRL import them from there).
    reward = opts.reward ?? (await rewardUpload(req.workspaceRoot, spec.reward.path, req.specFile));
    for (const [name, text] of Object.entries(reward.files)) files[`${RUN_FILES.reward}/${name}`] = text;
    rewardFile = posix.join(dir, RUN_FILES.reward, reward.main);
  }
  let agentLoopFile: string | undefined;
  let agentLoop: RewardUpload | undefined;
  if (spec.rollout?.agentLoop) {
    agentLoop =
      opts.agentLoop ?? (await rewardUpload(req.workspaceRoot, spec.rollout.agentLoop.path, req.specFile, 'rollout.agentLoop.path'));
    for (const [name, text] of Object.entries(agentLoop.files)) files[`${RUN_FILES.agentLoop}/${name}`] = text;
    agentLoopFile = posix.join(dir, RUN_FILES.agentLoop, agentLoop.main);
  }
  const inputs = { spec, id, dir, dirs, rewardFile, agentLoopFile, version };
  const command = trainerFor(spec.framework).command(inputs);
  Object.assign(files, command.files); // what the trainer's command reads (TRL: its --config, the resume wrapper)
  const setup = [...hostConfig.setup, ...(spec.setup ?? [])];
  const scheduler = schedulerFor(spec.scheduler ?? hostConfig.scheduler);
  const launch = {
    id,
    name: spec.name,
    dir,
    workdir: dirs.workdir,
    setup,
    env: runVars(req),
    command,
    summary: `${spec.framework} ${spec.algorithm} on ${host.name} (${scheduler.name})`,
  };
  files[RUN_FILES.launch] = renderLaunchScript(launch);
  files['job.sh'] = renderJobScript(dir);
  const record: RunRecord = {
    id,
    name: spec.name,
    kind: 'train',
    framework: spec.framework,
    algorithm: spec.algorithm,
    host: host.name,
    scheduler: scheduler.name,
    created: (req.now ?? new Date()).toISOString(),
    dir,
    ...(version ? { trainerVersion: version } : {}),
  };
  Object.assign(files, scheduler.files({ id, dir, spec, env: launchEnv(launch), pythonPath: command.pythonPath }, setup));
  const resumed = resumedFrom(spec, dirs);
  return {
    id,
    dir,
    workdir: dirs.workdir,
    record,
    files,
    scheduler,
    setup,
    neededFiles: neededFiles(spec, dirs),
    ...(reward ? { reward } : {}),
    ...(agentLoop ? { agentLoop } : {}),
    ...(resumed ? { resumedFrom: resumed } : {}),
  };
}

function neededFiles(spec: RunSpec, dirs: HostDirs): NeededFile[] {
  const out: NeededFile[] = [];
  asList(spec.data.train).forEach((p) => out.push({ field: 'data.train', path: hostPath(p, dirs) }));
  asList(spec.data.val).forEach((p) => out.push({ field: 'data.val', path: hostPath(p, dirs) }));
  const model = modelPath(spec.model, dirs);
  if (model !== spec.model) out.push({ field: 'model', path: model });
  if (spec.entry) {
    out.push({ field: 'entry.script', path: hostPath(spec.entry.script, dirs) });
    if (spec.entry.accelerateConfig) out.push({ field: 'entry.accelerateConfig', path: hostPath(spec.entry.accelerateConfig, dirs) });
  }
  return out;
}

/**
 * A run as it would be submitted, and every problem found before anything is written: what the real trainer would
 * refuse in the spec, then the checks on the host (files, GPUs, the trainer and its version, the scheduler command).
 * The launch script is built for the trainer version found on the host.
 */
export async function planRun(req: SubmitRequest, id?: string): Promise<{ run: PreparedRun; problems: Problem[] }> {
  const trainer = trainerFor(req.spec.framework);
  const first = await prepareRun(req, { id });
  const checked = await checkHost(req.host, {
    spec: req.spec,
    specFile: req.specFile,
    scheduler: first.scheduler.name,
    workdir: first.workdir,
    setup: first.setup,
    files: first.neededFiles,
    runsDir: posix.dirname(first.dir),
    ...(req.hostConfig.sharedFilesystem !== undefined ? { shared: req.hostConfig.sharedFilesystem } : {}),
  });
  // Built again for the version found, from the same id and the reward files already read.
  const run = checked.version
    ? await prepareRun(req, { id: first.id, version: checked.version, reward: first.reward, agentLoop: first.agentLoop })
    : first;
  const reward = !run.reward
    ? []
    : await checkRewardContract({
        host: req.host,
        spec: req.spec,
        specFile: req.specFile,
        upload: run.reward,
        // It needs the data, the working folder and the setup lines: when the host checks refused one, they said why.
        dataPath: checked.problems.some((p) => p.severity === 'error' && ['data.train', 'workdir', 'setup'].includes(p.field ?? ''))
          ? undefined
          : run.neededFiles.find((f) => f.field === 'data.train')?.path,
        workdir: run.workdir,
        setup: run.setup,
        env: runVars(req),
        secrets: (req.runEnv ?? NO_RUN_ENV).secrets,
      });
  const versioned = checked.version ? trainer.versionProblems(checked.version, req.spec, req.specFile) : [];
  return {
    run,
    problems: [
      ...trainer.problems(req.spec, req.specFile),
      ...(run.scheduler.problems?.(req.spec, req.specFile) ?? []),
      ...versioned,
      ...(req.runEnv?.problems ?? []),
      ...checked.problems,
      ...reward,
    ],
  };
}

/** Writes run.json through a temporary file and a rename, so a listing never reads half of it. */
export async function writeRecord(host: Host, record: RunRecord): Promise<void> {
  const tmp = posix.join(record.dir, `${RUN_FILES.record}.tmp`);
  await host.writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  await execChecked(host, `mv ${shellQuote(tmp)} ${shellQuote(posix.join(record.dir, RUN_FILES.record))}`);
}

/**
 * Creates the run folder (private: umask 077) with an atomic mkdir and writes its marker and run.json in the same
 * command, so a run folder exists without its record only if that one command is cut short (the listing reports and
 * sweeps those);
 * false when the folder exists already (two quick submits never share one).
 */
export async function createRunFolder(host: Host, record: RunRecord, lastAttempt: boolean): Promise<boolean> {
  const dir = shellQuote(record.dir);
  const tmp = shellQuote(posix.join(record.dir, `${RUN_FILES.record}.tmp`));
  // The marker first: it is what lets the listing remove a folder this command leaves half made (list-runs.ts).
  const r = await host.exec(
    `umask 077 && mkdir -p ${shellQuote(posix.dirname(record.dir))} || exit 2
t="$HOME"/${RUN_MARKER_TOKEN}
[ -s "$t" ] || { mkdir -p "\${t%/*}" && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' > "$t.$$" && mv "$t.$$" "$t"; } || exit 2
mkdir ${dir} || exit 1
cat "$t" > ${shellQuote(posix.join(record.dir, RUN_FILES.marker))} && cat > ${tmp} && mv ${tmp} ${shellQuote(posix.join(record.dir, RUN_FILES.record))} || exit 2`,
    { stdin: `${JSON.stringify(record)}\n`, timeoutMs: 30_000 },
  );
  if (r.code === 0) return true;
  if (r.code === 1 && !lastAttempt) return false;
  throw new Error(
    `${host.name}: cannot create the run folder ${record.dir}: ${r.stderr.trim() || `exit code ${r.code}${r.timedOut ? ', timed out' : ''}`}`,
  );
}

/**
 * Writes a created run folder's files (0600, scripts 0700), starts the job through its scheduler (secrets over stdin)
 * and records its pid or job id. The folder is never removed when the start fails: the start may have happened with
 * only its reply lost, and job.sh records itself in the folder, so the listing shows the job's real state.
 */
export async function startRunFolder(
  host: Host,
  run: { id: string; dir: string; files: Record<string, string>; record: RunRecord; scheduler: Scheduler },
  secrets: string,
): Promise<RunRecord> {
  for (const [name, content] of Object.entries(run.files)) {
    await host.writeFile(posix.join(run.dir, name), content, { mode: name.endsWith('.sh') || name.endsWith('.sbatch') ? 0o700 : 0o600 });
  }
  let started;
  try {
    started = await run.scheduler.start(host, run, secrets);
  } catch (err) {
    throw new Error(
      `${errorMessage(err)}\nThe run folder ${run.dir} is kept: if the job started, \`medrl runs\` lists it and \`medrl cancel ${run.id}\` stops it.`,
    );
  }
  const record = { ...run.record, ...started };
  await writeRecord(host, record);
  return record;
}

/** What a run would be made with, once its host was measured: its record, manifest and reward files' text. */
export interface PlannedProvenance {
  record: RunRecord;
  manifest: Provenance;
  rewardText: Record<string, string>;
}

/** A submit that re-runs a run (rerun-exactly.ts): the run it re-runs, and a check that may refuse before anything is written. */
export interface SubmitOptions {
  /** Recorded in the new run's manifest. */
  rerunOf?: { id: string; host: string };
  /** Called with what the run would be made with, after the host checks and the measuring; throws to refuse the submit. */
  check?: (planned: PlannedProvenance) => void | Promise<void>;
}

/**
 * Submits a run: checks the host first (nothing is written when a check fails), creates the run folder with its
 * run.json (an atomic mkdir), writes its files, starts the job and records its pid or job id. Throws a LocatedError listing
 * every problem when the host is not ready; returns the warnings of a run that was submitted.
 */
export async function submitRun(
  req: SubmitRequest,
  opts: SubmitOptions = {},
): Promise<{ run: PreparedRun; record: RunRecord; warnings: Problem[] }> {
  const secrets = secretsInput((req.runEnv ?? NO_RUN_ENV).secrets);
  const planned = await planRun(req);
  let run = planned.run;
  const problems = planned.problems;
  if (problems.some((p) => p.severity === 'error'))
    throw new LocatedError(`${run.record.name} was not submitted: ${req.host.name} is not ready`, problems);
  if (secrets && run.scheduler.refusesSecrets) throw new Error(`${run.record.name} was not submitted: ${run.scheduler.refusesSecrets}`);
  // One more round trip, after the checks passed (a refused run hashes no data): what provenance.json needs from the host.
  const model = run.neededFiles.find((f) => f.field === 'model');
  const facts = await collectHostFacts(req.host, {
    workdir: run.workdir,
    setup: run.setup,
    env: runVars(req),
    data: run.neededFiles.filter((f) => f.field.startsWith('data.')),
    model: { spec: req.spec.model, ...(model ? { path: model.path } : {}) },
  });
  const reward =
    run.reward && req.spec.reward && 'path' in req.spec.reward ? { ...run.reward, function: req.spec.reward.function } : undefined;
  const now = req.now ?? new Date();
  const manifestOf = (r: PreparedRun) =>
    buildProvenance({
      id: r.id,
      dir: r.dir,
      specText: req.specText,
      workspace: req.workspaceRoot,
      now,
      reward,
      facts,
      uses: req.runEnv?.uses ?? { services: {}, judges: {} },
      ...(opts.rerunOf ? { rerunOf: opts.rerunOf } : {}),
      ...(r.resumedFrom ? { resumedFrom: r.resumedFrom } : {}),
    });
  await opts.check?.({ record: run.record, manifest: manifestOf(run), rewardText: run.reward?.files ?? {} });
  for (let attempt = 0; !(await createRunFolder(req.host, run.record, attempt >= 4)); attempt++) {
    run = await prepareRun(req, { version: run.record.trainerVersion, reward: run.reward }); // the folder exists already: a new random suffix
  }
  // Written with the run's other files (0600), before the job starts; checked against its schema so readers can trust it.
  run.files[RUN_FILES.provenance] = `${JSON.stringify(provenanceSchema.parse(manifestOf(run)), null, 2)}\n`;
  const record = await startRunFolder(req.host, run, secrets);
  // What the checks warned about (e.g. a Slurm job with the partition's default CPUs and memory): the caller shows it.
  return { run, record, warnings: problems.filter((p) => p.severity !== 'error') };
}
