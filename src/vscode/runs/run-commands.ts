import * as vscode from 'vscode';
import { posix } from 'node:path';
import { workspaceHosts } from '../../core/config/workspace-config';
import { LocatedError } from '../../core/errors/located-error';
import { parseRunSpec } from '../../core/runs/load-run-spec';
import { prepareRun, runDataFiles, submitRun, type SubmitRequest } from '../../core/runs/submit-run';
import { submitRequest } from '../../core/submit/submit-request';
import { cancelRun } from '../../core/runs/cancel-run';
import type { RunInfo } from '../../core/runs/list-runs';
import { isActive, RUN_FILES, type RunRecord } from '../../core/runs/run-record';
import { RerunRefused, rerunExactly } from '../../core/submit/rerun-exactly';
import { renderNewSpec, type NewRunAnswers } from '../../core/runs/new-spec';
import type { RunSpec } from '../../core/runs/run-spec';
import { stateLabel } from '../../core/runs/run-summary';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import type { CommandTable, Deps } from '../deps';
import type { RunsNode, RunsTree } from './runs-tree';
import { runFileUri } from './run-file-provider';
import { runDetailsUri } from './run-provenance';
import { rerunDifferencesUri } from './rerun-differences';
import { runSpecDocument } from '../active-file';
import { specFileStem } from '../../core/checkpoints/resume-spec';
import { requireTrust } from '../workspace-trust';
import { BROWSE, pickRun } from '../pickers';
import { confirmIdentifiers } from '../datasets/phi-commands';

/**
 * The run a command acts on: the Runs view's node it was run on, a run ref `{ host, id }` (a notification's button), or,
 * with neither (the palette), one the user picks; undefined when the user backs out.
 */
async function runArg(
  deps: Deps,
  arg: unknown,
  title: string,
  filter?: (run: RunInfo) => boolean,
  none?: string,
): Promise<RunInfo | undefined> {
  const node = arg as RunsNode | { host?: string; id?: string } | undefined;
  if (node && 'kind' in node && node.kind === 'run') return node.run;
  const ref = node as { host?: string; id?: string } | undefined;
  if (!ref?.id) {
    const run = await pickRun(deps, { title, filter, none });
    return run === BROWSE ? undefined : run;
  }
  // A run just submitted (the "Follow Logs" button of its notification) may be newer than the last listing.
  if (!runById(deps.trees.runs, ref.id, ref.host)) await deps.trees.runs.refresh();
  const found = runById(deps.trees.runs, ref.id, ref.host);
  if (!found) throw new Error(`run ${ref.id} is not in the Runs view: refresh it, or check the host is reachable`);
  return found;
}

function runById(tree: RunsTree, id: string, host: string | undefined): RunInfo | undefined {
  return tree.runs.find((r) => r.record.id === id && (!host || r.host === host));
}

/** Submit, preview, cancel, rerun, clone and open runs, from the editor, the Runs view and the command palette. */
export const RUN_COMMANDS: CommandTable = {
  'medrl.submitRun': submitRunCommand,
  'medrl.previewLaunchScript': previewLaunchScriptCommand,
  'medrl.refreshRuns': refreshRunsCommand,
  'medrl.runsGroupByStatus': groupRunsByStatusCommand,
  'medrl.runsGroupByHost': groupRunsByHostCommand,
  'medrl.cancelRun': cancelRunCommand,
  'medrl.rerun': rerunCommand,
  'medrl.rerunExactly': rerunExactlyCommand,
  'medrl.cloneRunSpec': cloneRunSpecCommand,
  'medrl.openRunSpec': openRunSpecCommand,
  'medrl.openLaunchScript': openLaunchScriptCommand,
  'medrl.showRunDetails': showRunDetailsCommand,
  'medrl.openRunFolder': openRunFolderCommand,
  'medrl.copyRunId': copyRunIdCommand,
  'medrl.followRunLogs': followRunLogsCommand,
  'medrl.newRun': newRunCommand,
};

async function requestFor({ state, pool, runSecrets }: Deps, uri: vscode.Uri, spec: RunSpec, text: string): Promise<SubmitRequest> {
  const root = state.root;
  if (!root) throw new Error('open the workspace folder that holds medrl.yaml first');
  // The same host and run environment as `medrl submit` (services' URLs, judge, tokens); the secrets from SecretStorage.
  return submitRequest({
    spec,
    specText: text,
    specFile: uri.fsPath,
    config: state.requireConfig(),
    workspaceRoot: root.fsPath,
    pool,
    secrets: runSecrets,
  });
}

async function submitText(deps: Deps, uri: vscode.Uri, spec: RunSpec, text: string, specDoc?: vscode.TextDocument): Promise<void> {
  requireTrust('Submitting runs');
  const req = await requestFor(deps, uri, spec, text);
  const data = (await runDataFiles(req)).map((path) => ({ host: req.host.name, path }));
  if (!(await confirmIdentifiers(deps, data, 'submit'))) return;
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MedRL: submitting ${spec.name} to ${req.host.name}`, cancellable: false },
    async () => {
      try {
        return await submitRun(req);
      } catch (err) {
        // Host checks: each problem at its field's line in the spec, so the user sees what to fix where.
        if (err instanceof LocatedError && specDoc) deps.runSpecs.showProblems(specDoc.uri, err.problems, text);
        throw err;
      }
    },
  );
  announceSubmitted(deps, result.record, `submitted ${result.record.id} to ${result.record.host}`);
  // Warnings (e.g. a Slurm job on the partition's default CPUs and memory) at their fields, in the Problems panel.
  if (result.warnings.length && specDoc) deps.runSpecs.showProblems(specDoc.uri, result.warnings, text);
}

/** A run just submitted: logged, watched until it ends, listed, and a notification that follows its log. */
function announceSubmitted(deps: Deps, record: RunRecord, what: string): void {
  deps.ctx.log.info(`${what} (${record.scheduler}): ${record.dir}`);
  deps.runWatch.watch(record.host, record.id);
  void deps.trees.runs.refresh();
  void vscode.window.showInformationMessage(`MedRL: ${what}`, 'Follow Logs').then((pick) => {
    if (pick) void vscode.commands.executeCommand('medrl.followRunLogs', { host: record.host, id: record.id });
  });
}

/** Submits the spec in the editor (saved first); its problems, if any, go to the Problems panel instead. */
export function submitRunCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    const doc = await runSpecDocument(arg, deps.state);
    if (!doc) return;
    if (doc.isDirty) await doc.save();
    const loaded = deps.runSpecs.load(doc);
    if (!loaded) {
      void vscode.commands.executeCommand('workbench.actions.view.problems');
      throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has problems (see the Problems panel): nothing was submitted`);
    }
    await submitText(deps, doc.uri, loaded.spec, loaded.text, doc);
  };
}

/** Shows the launch script a submit of the spec in the editor would run, without submitting it. */
export function previewLaunchScriptCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    // Preparing a run reads the spec's files and asks its host (medrl.yaml's) what the trainer is.
    requireTrust('Previewing launch scripts');
    const doc = await runSpecDocument(arg, deps.state);
    if (!doc) return;
    const loaded = deps.runSpecs.load(doc);
    if (!loaded) throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has problems (see the Problems panel)`);
    const run = await prepareRun(await requestFor(deps, doc.uri, loaded.spec, loaded.text));
    const preview = await vscode.workspace.openTextDocument({ language: 'shellscript', content: run.files[RUN_FILES.launch] });
    await vscode.window.showTextDocument(preview, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  };
}

export function refreshRunsCommand({ trees }: Deps) {
  return () => trees.runs.refresh();
}

export function groupRunsByStatusCommand({ trees }: Deps) {
  return () => trees.runs.setGroupBy('status');
}

export function groupRunsByHostCommand({ trees }: Deps) {
  return () => trees.runs.setGroupBy('host');
}

/** Stops an active run's trainer after a modal confirmation; its folder stays. */
export function cancelRunCommand(deps: Deps) {
  const { ctx, pool, trees } = deps;
  return async (arg: unknown): Promise<void> => {
    requireTrust('Cancelling runs');
    const run = await runArg(
      deps,
      arg,
      'Run to cancel',
      (r) => isActive(r.state),
      'No queued or running run to cancel on the hosts in medrl.yaml.',
    );
    if (!run) return;
    if (!isActive(run.state)) throw new Error(`${run.record.id} is ${stateLabel(run)}: nothing to cancel`);
    const ok = await vscode.window.showWarningMessage(
      `Cancel run ${run.record.name} on ${run.host}?`,
      { modal: true, detail: `${run.record.id} (${run.record.scheduler}). The trainer is stopped; its folder stays.` },
      'Cancel Run',
    );
    if (ok !== 'Cancel Run') return;
    await cancelRun(await pool.get(run.host), run.record);
    ctx.log.info(`cancelled ${run.record.id} on ${run.host}`);
    await trees.runs.refresh();
  };
}

async function readRunFile({ pool }: Deps, run: RunInfo, name: string): Promise<string> {
  return (await (await pool.get(run.host)).readFile(posix.join(run.record.dir, name))).toString('utf8');
}

/** Submits a run's spec, as kept in its run folder, again. */
export function rerunCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Submitting runs');
    const run = await runArg(deps, arg, 'Run to submit again');
    if (!run) return;
    const text = await readRunFile(deps, run, RUN_FILES.spec);
    const loaded = parseRunSpec(text, `${run.host}:${run.record.dir}/${RUN_FILES.spec}`);
    if (!loaded.spec) throw new LocatedError(`the spec of ${run.record.id} is no longer valid`, loaded.problems);
    await submitText(deps, runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.spec)), loaded.spec, text);
  };
}

/**
 * Re-runs a run exactly (rerun-exactly.ts): its recorded spec, to its host, once the host's data, model and versions and
 * the workspace's reward files are found to match its provenance.json; refused, with the differences, when they do not.
 */
export function rerunExactlyCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Submitting runs');
    const run = await runArg(
      deps,
      arg,
      'Run to re-run exactly',
      (r) => r.record.kind === 'train',
      'No training run on the hosts in medrl.yaml.',
    );
    if (!run) return;
    const root = deps.state.root;
    if (!root) throw new Error('open the workspace folder that holds medrl.yaml first');
    const then = await deps.runProvenances.get(run);
    // The run's own data files: the same warning as any submit when the last identifier scan found identifiers in them.
    const data = (then.manifest.data ?? []).map((d) => ({ host: run.host, path: d.path }));
    if (!(await confirmIdentifiers(deps, data, 'submit'))) return;
    let result;
    try {
      result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `MedRL: re-running ${run.record.id} on ${run.host}: checking its data, model and versions`,
          cancellable: false,
        },
        () =>
          rerunExactly({ then, config: deps.state.requireConfig(), workspaceRoot: root.fsPath, pool: deps.pool, secrets: deps.runSecrets }),
      );
    } catch (err) {
      if (!(err instanceof RerunRefused)) throw err;
      deps.ctx.log.info(err.message);
      void vscode.window.showErrorMessage(`MedRL: ${err.summary}.`, 'Show Differences').then((pick) => {
        if (pick) void vscode.window.showTextDocument(rerunDifferencesUri(err), { preview: true });
      });
      return;
    }
    announceSubmitted(deps, result.record, `re-ran ${run.record.id} exactly as ${result.record.id} on ${result.record.host}`);
  };
}

/** Copies a run's spec into configs/ of the workspace, under a name not taken yet, and opens it. */
export function cloneRunSpecCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose spec to clone');
    if (!run) return;
    const root = deps.state.root;
    if (!root) throw new Error('open a workspace folder first');
    const text = await readRunFile(deps, run, RUN_FILES.spec);
    const base = specFileStem(run.record.name);
    let target = vscode.Uri.joinPath(root, 'configs', `${base}-copy.yaml`);
    for (let i = 2; await exists(target); i++) target = vscode.Uri.joinPath(root, 'configs', `${base}-copy-${i}.yaml`);
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(`# Cloned from run ${run.record.id} (${run.host})\n${text}`));
    await vscode.window.showTextDocument(target);
  };
}

export function openRunSpecCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose spec to open');
    if (!run) return;
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.spec)), { preview: true });
  };
}

export function openLaunchScriptCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose launch script to open');
    if (!run) return;
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.launch)), { preview: true });
  };
}

/** A run's provenance (what `medrl runs show` prints) in a read-only editor. */
export function showRunDetailsCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose details to show');
    if (!run) return;
    await vscode.window.showTextDocument(runDetailsUri(run), { preview: true });
  };
}

/** Opens a file of a run folder (or of one folder below it), picked in a quick pick. */
export function openRunFolderCommand(deps: Deps) {
  const { pool } = deps;
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose folder to open');
    if (!run) return;
    const host = await pool.get(run.host);
    const entries = await host.readdir(run.record.dir);
    const pick = await vscode.window.showQuickPick(
      entries.map((e) => ({
        label: e.kind === 'directory' ? `$(folder) ${e.name}/` : `$(file) ${e.name}`,
        description: e.kind === 'file' ? `${e.size} bytes` : '',
        name: e.name,
        dir: e.kind === 'directory',
      })),
      { title: `${run.host}:${run.record.dir}`, placeHolder: 'Open a file of the run folder' },
    );
    if (!pick) return;
    if (pick.dir) {
      const inner = await host.readdir(posix.join(run.record.dir, pick.name));
      const file = await vscode.window.showQuickPick(
        inner.filter((e) => e.kind === 'file').map((e) => e.name),
        { title: `${run.record.dir}/${pick.name}` },
      );
      if (file) await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, pick.name, file)), { preview: true });
      return;
    }
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, pick.name)), { preview: true });
  };
}

export function copyRunIdCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    const run = await runArg(deps, arg, 'Run whose ID to copy');
    if (!run) return;
    await vscode.env.clipboard.writeText(run.record.id);
    void vscode.window.setStatusBarMessage(`MedRL: copied ${run.record.id}`, 3000);
  };
}

/** Follows a run's log in its own output channel until the run ends. */
export function followRunLogsCommand(deps: Deps) {
  return async (arg: unknown): Promise<void> => {
    requireTrust('Reading run folders');
    const run = await runArg(deps, arg, 'Run whose log to follow');
    if (run) await deps.runLogs.follow(run);
  };
}

/** Writes a new spec into configs/ from the answers of a guided flow, and opens it. */
export function newRunCommand({ state }: Deps) {
  return async (): Promise<void> => {
    const answers = await askNewRun(hostsOf(state));
    if (!answers) return;
    const root = state.root;
    if (!root) throw new Error('open a workspace folder first');
    let target = vscode.Uri.joinPath(root, 'configs', `${answers.name}.yaml`);
    for (let i = 2; await exists(target); i++) target = vscode.Uri.joinPath(root, 'configs', `${answers.name}-${i}.yaml`);
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(renderNewSpec(answers)));
    await vscode.window.showTextDocument(target);
    void vscode.window.showInformationMessage(
      `MedRL: wrote ${vscode.workspace.asRelativePath(target)}. Edit it, then submit it from the editor title.`,
    );
  };
}

function hostsOf(state: WorkspaceConfigState): string[] {
  return workspaceHosts(state.config).map((h) => h.name);
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** The guided "new run" flow: framework, algorithm, host, model, dataset, reward, name. Undefined when the user backs out. */
async function askNewRun(hosts: string[]): Promise<NewRunAnswers | undefined> {
  const framework = (
    await vscode.window.showQuickPick(
      [
        { label: 'verl', description: 'PPO/GRPO with Ray, vLLM/SGLang rollouts' },
        { label: 'trl', description: 'Hugging Face TRL: SFT, GRPO, DPO' },
      ],
      { title: 'New run (1/7): framework' },
    )
  )?.label as NewRunAnswers['framework'] | undefined;
  if (!framework) return undefined;
  const algorithms = framework === 'verl' ? ['grpo', 'ppo', 'sft'] : ['sft', 'grpo', 'dpo'];
  const algorithm = (await vscode.window.showQuickPick(algorithms, { title: 'New run (2/7): algorithm' })) as
    NewRunAnswers['algorithm'] | undefined;
  if (!algorithm) return undefined;
  const host = await vscode.window.showQuickPick(hosts, { title: 'New run (3/7): host' });
  if (!host) return undefined;
  const model = await vscode.window.showInputBox({
    title: 'New run (4/7): base model',
    prompt: 'A hub id or a path on the host',
    value: 'Qwen/Qwen2.5-0.5B-Instruct',
    validateInput: (v) => (v.trim() ? undefined : 'a model is required'),
  });
  if (!model) return undefined;
  const train = await askTrainingData();
  if (!train) return undefined;
  let reward: NewRunAnswers['reward'];
  if (algorithm === 'grpo' || algorithm === 'ppo') {
    reward = await askReward(framework);
    if (!reward) return undefined;
  }
  const name = await vscode.window.showInputBox({
    title: 'New run (7/7): name',
    value: `${framework}-${algorithm}-${posix.basename(train).replace(/\.[^.]+$/, '')}`,
    validateInput: (v) => (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(v) ? undefined : 'letters, digits, ".", "_" and "-"'),
  });
  if (!name) return undefined;
  return { name, framework, algorithm, host, model, train, reward };
}

/** Step 5: a data file of the workspace, or a path typed for the host. */
async function askTrainingData(): Promise<string | undefined> {
  const dataFiles = await vscode.workspace.findFiles('**/*.{parquet,jsonl,json}', '**/{node_modules,.git,runs}/**', 200);
  const typed = '$(edit) Type a path on the host…';
  const dataPick = await vscode.window.showQuickPick([typed, ...dataFiles.map((u) => vscode.workspace.asRelativePath(u))], {
    title: 'New run (5/7): training data',
  });
  if (!dataPick) return undefined;
  return dataPick === typed
    ? await vscode.window.showInputBox({
        title: 'Training data path on the host',
        validateInput: (v) => (v.trim() ? undefined : 'a path is required'),
      })
    : dataPick;
}

/** Step 6 (GRPO and PPO): a reward function of configs/rewards/, or a reward model. */
async function askReward(framework: NewRunAnswers['framework']): Promise<NewRunAnswers['reward']> {
  const files = await vscode.workspace.findFiles('configs/rewards/*.py', undefined, 100);
  const modelChoice = '$(hubot) A reward model (verifier)…';
  const pick = await vscode.window.showQuickPick([...files.map((u) => vscode.workspace.asRelativePath(u)), modelChoice], {
    title: 'New run (6/7): reward',
  });
  if (!pick) return undefined;
  if (pick === modelChoice) {
    const rm = await vscode.window.showInputBox({
      title: 'Reward model (hub id or path)',
      value: 'FreedomIntelligence/medical_o1_verifier_3B',
    });
    if (!rm) return undefined;
    return { model: rm };
  }
  return { path: pick, function: framework === 'verl' ? 'compute_score' : 'reward' };
}
