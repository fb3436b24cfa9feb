import * as vscode from 'vscode';
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Host } from '../../core/remote/host';
import type { ResolvedHost } from '../../core/config/workspace-config';
import type { Checkpoint } from '../../core/checkpoints/checkpoint';
import { checkpointName } from '../../core/checkpoints/checkpoint-pick';
import { startMerge, waitForMerge } from '../../core/checkpoints/merge-checkpoint';
import { baseModelFolder, readRunSpecText, resumeSpecText } from '../../core/checkpoints/resume-spec';
import { deleteCheckpoint } from '../../core/checkpoints/delete-checkpoint';
import { download } from '../../core/checkpoints/download';
import { cancelRun } from '../../core/runs/cancel-run';
import { formatBytes } from '../../core/format/bytes';
import type { Ctx } from '../ctx';
import type { CommandTable, Deps } from '../deps';
import type { CheckpointsNode } from './checkpoints-tree';
import { requireTrust } from '../workspace-trust';
import { pickCheckpoint } from '../pickers';

type CkArg = Extract<CheckpointsNode, { kind: 'checkpoint' }>;
type Progress = vscode.Progress<{ message?: string; increment?: number }>;

/** MedRL's stand-ins (no GPU here) for the local host, where the real engines are usually missing. */
export function standinsFor(ctx: Ctx, host: ResolvedHost): string | undefined {
  const dir = join(ctx.extension.extensionUri.fsPath, 'standins');
  if (host.kind !== 'local' || !existsSync(dir)) return undefined;
  // A .vsix does not keep the executable bit of standins/bin/*: they run through PATH.
  for (const f of readdirSync(join(dir, 'bin'))) chmodSync(join(dir, 'bin', f), 0o755);
  return dir;
}

/** The checkpoint a command acts on: the tree item it was run on, or one picked from every host's (newest first). */
async function checkpointArg(
  deps: Deps,
  node: CkArg | undefined,
  fit: (c: Checkpoint) => boolean,
  what: string,
): Promise<CkArg | undefined> {
  if (node?.kind === 'checkpoint') return node;
  return pickCheckpoint(deps, {
    title: `Checkpoint to ${what}`,
    filter: fit,
    none: `No checkpoint to ${what} on the hosts in medrl.yaml: checkpoints appear once a run saves one (its save_freq / save_steps).`,
  });
}

/** Merge, download, delete and resume, from the Checkpoints view and the command palette. */
export const CHECKPOINT_COMMANDS: CommandTable = {
  'medrl.checkpoints.merge': mergeCheckpointCommand,
  'medrl.checkpoints.download': downloadCheckpointCommand,
  'medrl.checkpoints.delete': deleteCheckpointCommand,
  'medrl.checkpoints.resume': resumeFromCheckpointCommand,
};

/** Merges a checkpoint's shards into a HuggingFace folder on its host, then offers to serve it. */
export function mergeCheckpointCommand(deps: Deps) {
  return async (node?: CkArg): Promise<void> => {
    requireTrust();
    const arg = await checkpointArg(deps, node, (c) => !!c.mergeable, 'merge');
    if (!arg) return;
    const { host: h, ck } = arg;
    const host = await deps.pool.get(h.name);
    const baseModel = await baseModelFolder(host, ck);
    const target = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: merging ${checkpointName(ck)} to HuggingFace`, cancellable: true },
      (progress, token) => mergeWithProgress(deps, host, arg, baseModel, progress, token),
    );
    deps.trees.checkpoints.refresh();
    const pick = await vscode.window.showInformationMessage(`MedRL: merged ${checkpointName(ck)} into ${h.name}:${target}`, 'Serve It');
    if (pick) await vscode.commands.executeCommand('medrl.checkpoints.serve', { ...arg, ck: { ...ck, servable: target } });
  };
}

/** Starts the merge job and follows it to its HuggingFace folder; cancelling stops the job. */
async function mergeWithProgress(
  { ctx }: Deps,
  host: Host,
  { host: h, ck }: CkArg,
  baseModel: string | undefined,
  progress: Progress,
  token: vscode.CancellationToken,
): Promise<string> {
  const standins = standinsFor(ctx, h);
  const job = await startMerge(host, ck, h.runsDir, {
    baseModel,
    workdir: h.workdir,
    setup: h.setup,
    env: h.env,
    ...(standins ? { standins } : {}),
  });
  ctx.log.info(`merge ${job.id} on ${h.name}: ${ck.path} (log ${job.dir}/output.log)`);
  const ac = new AbortController();
  token.onCancellationRequested(() => {
    ac.abort();
    void cancelRun(host, job).catch((err: unknown) => ctx.log.error(`stopping merge ${job.id}: ${String(err)}`));
  });
  let done = 0;
  return waitForMerge(
    host,
    job,
    (p) => {
      ctx.log.info(`merge ${job.id}: ${p.message}`);
      const increment = p.fraction !== undefined ? Math.max(0, p.fraction - done) * 100 : undefined;
      if (p.fraction !== undefined) done = Math.max(done, p.fraction);
      progress.report({ message: p.message, ...(increment ? { increment } : {}) });
    },
    { signal: ac.signal },
  );
}

/** Downloads a checkpoint into a workspace folder, resumably, each file checked by sha256. */
export function downloadCheckpointCommand(deps: Deps) {
  return async (node?: CkArg): Promise<void> => {
    requireTrust();
    const arg = await checkpointArg(deps, node, () => true, 'download');
    if (!arg) return;
    const root = deps.state.root;
    if (!root) throw new Error('open a folder first: checkpoints download into the workspace');
    const { host: h, ck } = arg;
    const rel = await vscode.window.showInputBox({
      title: `Download ${checkpointName(ck)} (${formatBytes(ck.sizeBytes)}) from ${h.name}`,
      prompt: 'Folder in the workspace to download into (run it again to continue an interrupted download)',
      value: posix.join('checkpoints', ck.run?.id ?? posix.basename(ck.root), posix.basename(ck.path)),
    });
    if (!rel) return;
    const dest = vscode.Uri.joinPath(root, rel).fsPath;
    const host = await deps.pool.get(h.name);
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: downloading ${checkpointName(ck)}`, cancellable: true },
      (progress, token) => downloadWithProgress(deps, host, ck, dest, progress, token),
    );
    deps.ctx.log.info(
      `downloaded ${h.name}:${ck.path} to ${r.dest}: ${r.files} files, ${r.bytes} bytes in ${r.seconds.toFixed(1)} s, sha256 verified`,
    );
    void vscode.window.showInformationMessage(
      `MedRL: downloaded ${checkpointName(ck)} to ${rel} (${formatBytes(r.bytes)}, sha256 verified)`,
    );
  };
}

/** Downloads with a progress bar; cancelling keeps what arrived, so Download again continues. */
function downloadWithProgress(
  { ctx }: Deps,
  host: Host,
  ck: Checkpoint,
  dest: string,
  progress: Progress,
  token: vscode.CancellationToken,
): ReturnType<typeof download> {
  const ac = new AbortController();
  token.onCancellationRequested(() => ac.abort());
  let shown = 0;
  return download(host, ck.path, dest, {
    signal: ac.signal,
    onProgress: (p) => {
      const pct = p.total ? (p.done / p.total) * 100 : 100;
      progress.report({
        increment: pct - shown,
        message: `${formatBytes(p.done)} of ${formatBytes(p.total)} · ${formatBytes(p.bytesPerSecond)}/s`,
      });
      shown = pct;
    },
    onRetry: (err, n) => ctx.log.warn(`download ${ck.path}: ${String(err)}; continuing (attempt ${n})`),
  }).catch((err: unknown) => {
    if (ac.signal.aborted)
      throw new Error(`download of ${checkpointName(ck)} cancelled; run Download again to continue where it stopped`, { cause: err });
    throw err;
  });
}

/** Deletes a checkpoint on its host, after a modal confirmation. */
export function deleteCheckpointCommand(deps: Deps) {
  return async (node?: CkArg): Promise<void> => {
    requireTrust();
    const arg = await checkpointArg(deps, node, () => true, 'delete');
    if (!arg) return;
    const { host: h, ck } = arg;
    const ok = await vscode.window.showWarningMessage(
      `Delete ${checkpointName(ck)} on ${h.name}?`,
      {
        modal: true,
        detail: `${ck.path}\n\nThis frees ${formatBytes(ck.sizeBytes)} and cannot be undone.${ck.latest && ck.framework === 'verl' ? ' It is the latest step: latest_checkpointed_iteration.txt will name the newest step left.' : ''}`,
      },
      'Delete',
    );
    if (ok !== 'Delete') return;
    const r = await deleteCheckpoint(await deps.pool.get(h.name), ck);
    deps.ctx.log.info(`deleted ${h.name}:${ck.path} (${r.freedBytes} bytes)`);
    deps.trees.checkpoints.refresh();
    void vscode.window.showInformationMessage(`MedRL: deleted ${checkpointName(ck)}: freed ${formatBytes(r.freedBytes)}`);
  };
}

/** Writes a run spec to configs/ that resumes the checkpoint's run from its step, and opens it. */
export function resumeFromCheckpointCommand(deps: Deps) {
  return async (node?: CkArg): Promise<void> => {
    requireTrust();
    const arg = await checkpointArg(deps, node, (c) => !!c.run, 'resume training from');
    if (!arg) return;
    const { host: h, ck } = arg;
    const root = deps.state.root;
    if (!root || !ck.run) throw new Error('open the workspace folder first: the new run spec is written to its configs/');
    const spec = resumeSpecText(await readRunSpecText(await deps.pool.get(h.name), ck.run.dir), ck, `${h.name}:${ck.run.dir}/spec.yaml`);
    let uri = vscode.Uri.joinPath(root, 'configs', `${spec.stem}.yaml`);
    for (let i = 2; await exists(uri); i++) uri = vscode.Uri.joinPath(root, 'configs', `${spec.stem}-${i}.yaml`);
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(spec.text));
    await vscode.window.showTextDocument(uri);
    void vscode.window.showInformationMessage(
      `MedRL: wrote ${vscode.workspace.asRelativePath(uri)}: submit it to resume ${ck.run.name ?? ck.run.id} from step ${ck.step}.`,
    );
  };
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return false;
    throw err;
  }
}
