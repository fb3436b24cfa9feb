import * as vscode from 'vscode';
import { posix } from 'node:path';
import { findHost, workspaceHosts, type WorkspaceConfig } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { fieldPosition } from '../../core/config/yaml-document';
import { errorMessage, LocatedError, type Problem } from '../../core/errors/located-error';
import { parseRunSpec } from '../../core/runs/load-run-spec';
import { prepareRun, submitRun, type SubmitRequest } from '../../core/runs/submit-run';
import type { SecretSource } from '../../core/submit/run-environment';
import { submitRequest } from '../../core/submit/submit-request';
import { cancelRun } from '../../core/runs/cancel-run';
import { followRun } from '../../core/runs/follow-log';
import type { RunInfo } from '../../core/runs/list-runs';
import { isActive, RUN_FILES } from '../../core/runs/run-record';
import { renderNewSpec, type NewRunAnswers } from '../../core/runs/new-spec';
import type { RunSpec } from '../../core/runs/run-spec';
import { stateLabel } from '../../core/runs/run-summary';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { toDiagnostic } from '../config/workspace-config-state';
import type { Ctx } from '../ctx';
import type { RunsNode, RunsTree } from './runs-tree';
import { RUN_FILE_SCHEME, RunFileProvider, runFileUri } from './run-file-provider';
import { runSpecDocument } from '../active-file';
import { specFileStem } from '../../core/checkpoints/resume-spec';
import { requireTrust } from '../workspace-trust';

function runOf(arg: unknown, tree: RunsTree): RunInfo {
  const node = arg as RunsNode | { host?: string; id?: string } | undefined;
  if (node && 'kind' in node && node.kind === 'run') return node.run;
  const ref = node as { host?: string; id?: string } | undefined;
  const found = ref?.id ? tree.runs.find((r) => r.record.id === ref.id && (!ref.host || r.host === ref.host)) : undefined;
  if (!found) throw new Error('select a run in the Runs view');
  return found;
}

export function registerRunCommands(ctx: Ctx, state: WorkspaceConfigState, pool: HostPool, tree: RunsTree, secrets: SecretSource): void {
  const diagnostics = vscode.languages.createDiagnosticCollection('medrl-runs');
  const followers = new Map<string, { channel: vscode.OutputChannel; abort: AbortController }>();
  ctx.push(diagnostics, vscode.workspace.registerTextDocumentContentProvider(RUN_FILE_SCHEME, new RunFileProvider(pool)), {
    dispose: () => {
      for (const f of followers.values()) {
        f.abort.abort();
        f.channel.dispose();
      }
    },
  });

  const requireConfig = (): WorkspaceConfig => {
    if (!state.config) throw new Error('medrl.yaml is missing or has problems: see the Problems panel');
    return state.config;
  };

  /** Parses a spec document; schema problems go to the Problems panel at their lines. */
  const loadSpec = (doc: vscode.TextDocument): { spec: RunSpec; text: string } | undefined => {
    const text = doc.getText();
    const loaded = parseRunSpec(text, vscode.workspace.asRelativePath(doc.uri));
    diagnostics.set(doc.uri, loaded.problems.map(toDiagnostic));
    return loaded.spec ? { spec: loaded.spec, text } : undefined;
  };

  const requestFor = async (uri: vscode.Uri, spec: RunSpec, text: string): Promise<SubmitRequest> => {
    const root = state.root;
    if (!root) throw new Error('open the workspace folder that holds medrl.yaml first');
    // The same host and run environment as `medrl submit` (services' URLs, judge, tokens); the secrets from SecretStorage.
    return submitRequest({ spec, specText: text, specFile: uri.fsPath, config: requireConfig(), workspaceRoot: root.fsPath, pool, secrets });
  };

  const submitText = async (uri: vscode.Uri, spec: RunSpec, text: string, specDoc?: vscode.TextDocument): Promise<void> => {
    requireTrust('Submitting runs');
    const req = await requestFor(uri, spec, text);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: submitting ${spec.name} to ${req.host.name}`, cancellable: false },
      async () => {
        try {
          return await submitRun(req);
        } catch (err) {
          // Host checks: each problem at its field's line in the spec, so the user sees what to fix where.
          if (err instanceof LocatedError && specDoc) diagnostics.set(specDoc.uri, err.problems.map((p) => toDiagnostic(withLine(p, text))));
          throw err;
        }
      },
    );
    ctx.log.info(`submitted ${result.record.id} to ${result.record.host} (${result.record.scheduler}): ${result.record.dir}`);
    void tree.refresh();
    void vscode.window.showInformationMessage(`MedRL: submitted ${result.record.id} to ${result.record.host}`, 'Follow Logs').then((pick) => {
      if (pick) void vscode.commands.executeCommand('medrl.followRunLogs', { host: result.record.host, id: result.record.id });
    });
  };

  ctx.command('medrl.submitRun', async (arg: unknown) => {
    const doc = await runSpecDocument(arg);
    if (doc.isDirty) await doc.save();
    const loaded = loadSpec(doc);
    if (!loaded) {
      void vscode.commands.executeCommand('workbench.actions.view.problems');
      throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has problems (see the Problems panel): nothing was submitted`);
    }
    await submitText(doc.uri, loaded.spec, loaded.text, doc);
  });

  ctx.command('medrl.previewLaunchScript', async (arg: unknown) => {
    // Preparing a run reads the spec's files and asks its host (medrl.yaml's) what the trainer is.
    requireTrust('Previewing launch scripts');
    const doc = await runSpecDocument(arg);
    const loaded = loadSpec(doc);
    if (!loaded) throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has problems (see the Problems panel)`);
    const run = await prepareRun(await requestFor(doc.uri, loaded.spec, loaded.text));
    const preview = await vscode.workspace.openTextDocument({ language: 'shellscript', content: run.files[RUN_FILES.launch] });
    await vscode.window.showTextDocument(preview, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  });

  ctx.command('medrl.refreshRuns', () => tree.refresh());
  ctx.command('medrl.runsGroupByStatus', () => tree.setGroupBy('status'));
  ctx.command('medrl.runsGroupByHost', () => tree.setGroupBy('host'));

  ctx.command('medrl.cancelRun', async (arg: unknown) => {
    requireTrust('Cancelling runs');
    const run = runOf(arg, tree);
    if (!isActive(run.state)) throw new Error(`${run.record.id} is ${stateLabel(run)}: nothing to cancel`);
    const ok = await vscode.window.showWarningMessage(`Cancel run ${run.record.name} on ${run.host}?`, { modal: true, detail: `${run.record.id} (${run.record.scheduler}). The trainer is stopped; its folder stays.` }, 'Cancel Run');
    if (ok !== 'Cancel Run') return;
    await cancelRun(await pool.get(run.host), run.record);
    ctx.log.info(`cancelled ${run.record.id} on ${run.host}`);
    await tree.refresh();
  });

  const readRunFile = async (run: RunInfo, name: string): Promise<string> => (await (await pool.get(run.host)).readFile(posix.join(run.record.dir, name))).toString('utf8');

  ctx.command('medrl.rerun', async (arg: unknown) => {
    requireTrust('Submitting runs');
    const run = runOf(arg, tree);
    const text = await readRunFile(run, RUN_FILES.spec);
    const loaded = parseRunSpec(text, `${run.host}:${run.record.dir}/${RUN_FILES.spec}`);
    if (!loaded.spec) throw new LocatedError(`the spec of ${run.record.id} is no longer valid`, loaded.problems);
    await submitText(runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.spec)), loaded.spec, text);
  });

  ctx.command('medrl.cloneRunSpec', async (arg: unknown) => {
    requireTrust('Reading run folders');
    const run = runOf(arg, tree);
    const root = state.root;
    if (!root) throw new Error('open a workspace folder first');
    const text = await readRunFile(run, RUN_FILES.spec);
    const base = specFileStem(run.record.name);
    let target = vscode.Uri.joinPath(root, 'configs', `${base}-copy.yaml`);
    for (let i = 2; await exists(target); i++) target = vscode.Uri.joinPath(root, 'configs', `${base}-copy-${i}.yaml`);
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(`# Cloned from run ${run.record.id} (${run.host})\n${text}`));
    await vscode.window.showTextDocument(target);
  });

  ctx.command('medrl.openRunSpec', async (arg: unknown) => {
    requireTrust('Reading run folders');
    const run = runOf(arg, tree);
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.spec)), { preview: true });
  });

  ctx.command('medrl.openLaunchScript', async (arg: unknown) => {
    requireTrust('Reading run folders');
    const run = runOf(arg, tree);
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, RUN_FILES.launch)), { preview: true });
  });

  ctx.command('medrl.openRunFolder', async (arg: unknown) => {
    requireTrust('Reading run folders');
    const run = runOf(arg, tree);
    const host = await pool.get(run.host);
    const entries = await host.readdir(run.record.dir);
    const pick = await vscode.window.showQuickPick(
      entries.map((e) => ({ label: e.kind === 'directory' ? `$(folder) ${e.name}/` : `$(file) ${e.name}`, description: e.kind === 'file' ? `${e.size} bytes` : '', name: e.name, dir: e.kind === 'directory' })),
      { title: `${run.host}:${run.record.dir}`, placeHolder: 'Open a file of the run folder' },
    );
    if (!pick) return;
    if (pick.dir) {
      const inner = await host.readdir(posix.join(run.record.dir, pick.name));
      const file = await vscode.window.showQuickPick(inner.filter((e) => e.kind === 'file').map((e) => e.name), { title: `${run.record.dir}/${pick.name}` });
      if (file) await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, pick.name, file)), { preview: true });
      return;
    }
    await vscode.window.showTextDocument(runFileUri(run.host, posix.join(run.record.dir, pick.name)), { preview: true });
  });

  ctx.command('medrl.copyRunId', async (arg: unknown) => {
    const run = runOf(arg, tree);
    await vscode.env.clipboard.writeText(run.record.id);
    void vscode.window.setStatusBarMessage(`MedRL: copied ${run.record.id}`, 3000);
  });

  ctx.command('medrl.followRunLogs', async (arg: unknown) => {
    requireTrust('Reading run folders');
    const run = runOf(arg, tree);
    const key = `${run.host}/${run.record.id}`;
    const existing = followers.get(key);
    if (existing) {
      existing.channel.show(true);
      return;
    }
    const channel = vscode.window.createOutputChannel(`MedRL Run: ${run.record.name} (${run.host})`);
    const abort = new AbortController();
    followers.set(key, { channel, abort });
    channel.show(true);
    const host = await pool.get(run.host);
    const runsDir = findHost(requireConfig(), run.host).runsDir;
    void (async () => {
      try {
        for await (const line of followRun(host, runsDir, run.record, { signal: abort.signal, pollMs: 1000 })) channel.appendLine(line);
        channel.appendLine(`[MedRL] ${run.record.id} ended: the log is complete.`);
      } catch (err) {
        if (!abort.signal.aborted) {
          channel.appendLine(`[MedRL] following stopped: ${errorMessage(err)}`);
          ctx.log.error(`following ${run.record.id}: ${errorMessage(err)}`);
        }
      } finally {
        followers.delete(key);
      }
    })();
  });

  ctx.command('medrl.newRun', async () => {
    const answers = await askNewRun(hostsOf(state));
    if (!answers) return;
    const root = state.root;
    if (!root) throw new Error('open a workspace folder first');
    let target = vscode.Uri.joinPath(root, 'configs', `${answers.name}.yaml`);
    for (let i = 2; await exists(target); i++) target = vscode.Uri.joinPath(root, 'configs', `${answers.name}-${i}.yaml`);
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(renderNewSpec(answers)));
    await vscode.window.showTextDocument(target);
    void vscode.window.showInformationMessage(`MedRL: wrote ${vscode.workspace.asRelativePath(target)}. Edit it, then submit it from the editor title.`);
  });

  // Specs are checked as they are opened and saved, so schema problems show before any submit.
  const check = (doc: vscode.TextDocument) => {
    if (doc.languageId === 'yaml' && /\/configs\/[^/]+\.ya?ml$/.test(doc.uri.path)) loadSpec(doc);
  };
  ctx.push(vscode.workspace.onDidOpenTextDocument(check), vscode.workspace.onDidSaveTextDocument(check), vscode.workspace.onDidCloseTextDocument((d) => diagnostics.delete(d.uri)));
  vscode.workspace.textDocuments.forEach(check);
}

function withLine(p: Problem, text: string): Problem {
  return p.field && p.line === undefined ? { ...p, ...fieldPosition(text, p.field) } : p;
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
  const framework = (await vscode.window.showQuickPick([{ label: 'verl', description: 'PPO/GRPO with Ray, vLLM/SGLang rollouts' }, { label: 'trl', description: 'Hugging Face TRL: SFT, GRPO, DPO' }], { title: 'New run (1/7): framework' }))?.label as NewRunAnswers['framework'] | undefined;
  if (!framework) return undefined;
  const algorithms = framework === 'verl' ? ['grpo', 'ppo', 'sft'] : ['sft', 'grpo', 'dpo'];
  const algorithm = (await vscode.window.showQuickPick(algorithms, { title: 'New run (2/7): algorithm' })) as NewRunAnswers['algorithm'] | undefined;
  if (!algorithm) return undefined;
  const host = await vscode.window.showQuickPick(hosts, { title: 'New run (3/7): host' });
  if (!host) return undefined;
  const model = await vscode.window.showInputBox({ title: 'New run (4/7): base model', prompt: 'A hub id or a path on the host', value: 'Qwen/Qwen2.5-0.5B-Instruct', validateInput: (v) => (v.trim() ? undefined : 'a model is required') });
  if (!model) return undefined;
  const dataFiles = await vscode.workspace.findFiles('**/*.{parquet,jsonl,json}', '**/{node_modules,.git,runs}/**', 200);
  const typed = '$(edit) Type a path on the host…';
  const dataPick = await vscode.window.showQuickPick([typed, ...dataFiles.map((u) => vscode.workspace.asRelativePath(u))], { title: 'New run (5/7): training data' });
  if (!dataPick) return undefined;
  const train = dataPick === typed ? await vscode.window.showInputBox({ title: 'Training data path on the host', validateInput: (v) => (v.trim() ? undefined : 'a path is required') }) : dataPick;
  if (!train) return undefined;
  let reward: NewRunAnswers['reward'];
  if (algorithm === 'grpo' || algorithm === 'ppo') {
    const files = await vscode.workspace.findFiles('configs/rewards/*.py', undefined, 100);
    const modelChoice = '$(hubot) A reward model (verifier)…';
    const pick = await vscode.window.showQuickPick([...files.map((u) => vscode.workspace.asRelativePath(u)), modelChoice], { title: 'New run (6/7): reward' });
    if (!pick) return undefined;
    if (pick === modelChoice) {
      const rm = await vscode.window.showInputBox({ title: 'Reward model (hub id or path)', value: 'FreedomIntelligence/medical_o1_verifier_3B' });
      if (!rm) return undefined;
      reward = { model: rm };
    } else {
      reward = { path: pick, function: framework === 'verl' ? 'compute_score' : 'reward' };
    }
  }
  const name = await vscode.window.showInputBox({ title: 'New run (7/7): name', value: `${framework}-${algorithm}-${posix.basename(train).replace(/\.[^.]+$/, '')}`, validateInput: (v) => (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(v) ? undefined : 'letters, digits, ".", "_" and "-"') });
  if (!name) return undefined;
  return { name, framework, algorithm, host, model, train, reward };
}
