import * as vscode from 'vscode';
import { posix } from 'node:path';
import { LOCAL_HOST, workspaceHosts } from '../../core/config/workspace-config';
import { uploadFiles } from '../../core/datasets/upload-dataset';
import { formatBytes } from '../../core/format/bytes';
import type { CommandTable, Deps } from '../deps';
import { openConvertPanel } from './dataset-convert-panel';
import { datasetArg, isLocal } from './dataset-ref';
import { confirmIdentifiers, scanDatasetPhiCommand } from './phi-commands';

/** Preview, validate, convert, upload and scan for identifiers, from the Datasets view, the Explorer and the command palette. */
export const DATASET_COMMANDS: CommandTable = {
  'medrl.openDatasetPreview': openDatasetPreviewCommand,
  'medrl.validateDataset': validateDatasetCommand,
  'medrl.convertDataset': convertDatasetCommand,
  'medrl.uploadDataset': uploadDatasetCommand,
  'medrl.scanDatasetPhi': scanDatasetPhiCommand,
};

/** Opens a dataset file's preview; a problem node of the Datasets view also names the row to show. */
export function openDatasetPreviewCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const row =
      typeof arg === 'object' && arg !== null && typeof (arg as { row?: unknown }).row === 'number'
        ? (arg as { row: number }).row
        : undefined;
    const ref = await datasetArg(deps, arg, 'preview');
    if (ref) await deps.previews.show(ref, row);
  };
}

/** Reads a whole dataset file again and reports its problems. */
export function validateDatasetCommand(deps: Deps) {
  const { ctx, inspections } = deps;
  return async (arg?: unknown): Promise<void> => {
    const ref = await datasetArg(deps, arg, 'validate');
    if (!ref) return;
    const summary = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `MedRL: validating ${posix.basename(ref.path)}`, cancellable: true },
      (progress, token) => {
        const ctl = new AbortController();
        token.onCancellationRequested(() => ctl.abort());
        return inspections.inspect(ref, {
          force: true,
          signal: ctl.signal,
          onProgress: (rows) => progress.report({ message: `${rows} rows` }),
        });
      },
    );
    const msg = `${posix.basename(ref.path)}: ${summary.rows} rows, ${summary.rowsOk} fine, ${summary.problemCount} problem(s)`;
    ctx.log.info(msg);
    if (summary.problemCount === 0) void vscode.window.showInformationMessage(`MedRL: ${msg}`);
    else {
      const actions = isLocal(ref) ? ['Show Problems', 'Preview'] : ['Preview'];
      void vscode.window.showWarningMessage(`MedRL: ${msg}`, ...actions).then((pick) => {
        if (pick === 'Show Problems') void vscode.commands.executeCommand('workbench.actions.view.problems');
        if (pick === 'Preview') void vscode.commands.executeCommand('medrl.openDatasetPreview', ref);
      });
    }
  };
}

export function convertDatasetCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const ref = await datasetArg(deps, arg, 'convert');
    if (ref) await openConvertPanel(deps, ref);
  };
}

/** Copies a dataset file to a folder on another host. */
export function uploadDatasetCommand(deps: Deps) {
  const { ctx, state, pool } = deps;
  return async (arg?: unknown): Promise<void> => {
    if (!vscode.workspace.isTrusted) throw new Error('uploading to a host needs a trusted workspace');
    const ref = await datasetArg(deps, arg, 'upload');
    if (!ref || !(await confirmIdentifiers(deps, [ref], 'upload'))) return;
    const hosts = workspaceHosts(state.config)
      .map((h) => h.name)
      .filter((h) => h !== ref.host && h !== LOCAL_HOST);
    if (hosts.length === 0) throw new Error('no SSH host in medrl.yaml to upload to: add one under hosts');
    const target = await vscode.window.showQuickPick(hosts, { title: `Upload ${posix.basename(ref.path)} to host` });
    if (!target) return;
    const dir = await vscode.window.showInputBox({
      title: `Folder on ${target}`,
      value: `~/data/${posix.basename(posix.dirname(ref.path))}`,
      validateInput: (v) => (v.trim() ? undefined : 'give a folder'),
    });
    if (!dir) return;
    const [dest] = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `MedRL: uploading ${posix.basename(ref.path)} to ${target}`,
        cancellable: true,
      },
      async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        let shown = 0;
        return uploadFiles(pool, await pool.get(ref.host), [ref.path], target, dir.trim(), {
          signal: abort.signal,
          onProgress: (_file, copied, total) => {
            const pct = total ? (100 * copied) / total : 100;
            progress.report({ increment: pct - shown, message: `${formatBytes(copied)} of ${formatBytes(total)}` });
            shown = pct;
          },
        });
      },
    );
    ctx.log.info(`uploaded ${ref.host}:${ref.path} to ${target}:${dest}`);
    void vscode.window.showInformationMessage(`MedRL: uploaded to ${target}:${dest}`);
  };
}
