import * as vscode from 'vscode';
import { posix } from 'node:path';
import { phiWarning } from '../../core/phi/phi-check';
import { countsText, identifierTotal } from '../../core/phi/phi-categories';
import { redactDataset } from '../../core/phi/redact-dataset';
import type { ScanCounts } from '../../core/phi/scan-counts';
import type { Deps } from '../deps';
import { requireTrust } from '../workspace-trust';
import { datasetArg, isLocal, type DatasetRef } from './dataset-ref';

/**
 * A file never scanned is scanned before an upload (data about to leave this machine) only when it is local and at most
 * this big (seconds); a larger or remote one is not scanned implicitly (minutes, or a whole file over SSH) and gets no
 * warning. A submit never scans: runs are submitted often, their data usually already sits on the training host, and
 * a scan before each would hold every submit up; it warns with the counts of scans the user ran.
 */
const AUTO_SCAN_BYTES = 50 * 1024 * 1024;

/** How a dataset is named in messages: its path in the workspace, or host:path. */
export function datasetLabel(ref: DatasetRef): string {
  return isLocal(ref) ? vscode.workspace.asRelativePath(ref.path) : `${ref.host}:${ref.path}`;
}

/** Scans a dataset for identifiers under a cancellable notification; undefined when the user cancelled. */
async function scanWithProgress(deps: Deps, ref: DatasetRef): Promise<ScanCounts | undefined> {
  const ctl = new AbortController();
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `MedRL: scanning ${posix.basename(ref.path)} for identifiers`,
        cancellable: true,
      },
      (progress, token) => {
        token.onCancellationRequested(() => ctl.abort());
        return deps.phiScans.scan(ref, { signal: ctl.signal, onProgress: (rows) => progress.report({ message: `${rows} rows scanned` }) });
      },
    );
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    throw err;
  }
}

/** "5 identifiers in notes.jsonl: 3 phone, 2 date", counts only. */
function scanResultText(ref: DatasetRef, s: ScanCounts): string {
  const total = identifierTotal(s.counts);
  const unreadable = s.unreadable ? ` (${s.unreadable} row(s) could not be read, so were not scanned)` : '';
  const name = posix.basename(ref.path);
  if (!total) return `No identifiers found in ${name}: ${s.rows} rows scanned${unreadable}`;
  return `${total} identifier${total === 1 ? '' : 's'} in ${name}: ${countsText(s.counts)}${unreadable}`;
}

/** MedRL: Scan Dataset for Identifiers: counts per category, kept for the Datasets view and the upload/submit warnings. */
export function scanDatasetPhiCommand(deps: Deps) {
  return async (arg?: unknown): Promise<void> => {
    const ref = await datasetArg(deps, arg, 'scan for identifiers');
    if (!ref) return;
    const s = await scanWithProgress(deps, ref);
    if (!s) return;
    const msg = scanResultText(ref, s);
    deps.ctx.log.info(`${datasetLabel(ref)}: ${msg}`);
    if (!identifierTotal(s.counts)) {
      void vscode.window.showInformationMessage(`MedRL: ${msg}`);
      return;
    }
    // Writing the copy runs commands on the host (cat, mv): not in Restricted Mode.
    const actions = vscode.workspace.isTrusted ? ['Write Redacted Copy…'] : [];
    const pick = await vscode.window.showWarningMessage(`MedRL: ${msg}`, ...actions);
    if (pick) await writeRedactedCopy(deps, ref);
  };
}

/** `notes.jsonl` → `notes.redacted.jsonl`, beside it. */
function redactedName(path: string): string {
  const ext = posix.extname(path);
  return posix.join(posix.dirname(path), `${posix.basename(path, ext)}.redacted${ext}`);
}

/** Writes a copy with each identifier replaced by its category, on the dataset's host, where the user says. */
async function writeRedactedCopy(deps: Deps, ref: DatasetRef): Promise<void> {
  requireTrust('Writing a redacted copy');
  const out = await vscode.window.showInputBox({
    title: `Redacted copy of ${posix.basename(ref.path)}${isLocal(ref) ? '' : ` on ${ref.host}`}`,
    prompt: 'Path of the copy, written readable by you only; each identifier becomes its category, such as [PHONE]',
    value: redactedName(ref.path),
    validateInput: (v) => (!v.trim() ? 'give a path' : v.trim() === ref.path ? 'give another path than the dataset itself' : undefined),
  });
  if (!out) return;
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MedRL: writing ${posix.basename(out.trim())}` },
    async () => redactDataset(await deps.pool.get(ref.host), ref.path, out.trim()),
  );
  deps.ctx.log.info(`wrote ${ref.host}:${out.trim()}: ${summary.rows} row(s), redacted ${countsText(summary.counts) || 'nothing'}`);
  void vscode.window.showInformationMessage(
    `MedRL: wrote ${posix.basename(out.trim())}: ${summary.rows} rows, ${identifierTotal(summary.counts)} identifiers redacted`,
  );
}

/** The counts to warn with: the file's current scan, or before an upload a new one of a small local file; undefined: no warning. */
async function countsForWarning(deps: Deps, ref: DatasetRef, action: 'upload' | 'submit'): Promise<ScanCounts | 'cancelled' | undefined> {
  const { size, counts } = await deps.phiScans.current(ref);
  if (counts) return counts;
  if (action === 'submit' || !isLocal(ref) || size > AUTO_SCAN_BYTES) return undefined;
  return (await scanWithProgress(deps, ref)) ?? 'cancelled';
}

/**
 * Before an upload or submit: a modal warning when a data file's scan found identifiers. True to go on; false when the
 * user stopped (Cancel, a cancelled scan, or Show Scan, which scans the first such file again and shows its result).
 */
export async function confirmIdentifiers(deps: Deps, refs: DatasetRef[], action: 'upload' | 'submit'): Promise<boolean> {
  const scanned: { ref: DatasetRef; counts: ScanCounts }[] = [];
  for (const ref of refs) {
    // A file that cannot be read here is left to the upload or the submit's host checks, which say why.
    const counts = await countsForWarning(deps, ref, action).catch(() => undefined);
    // Cancelling the scan before an upload or submit cancels the upload or submit too.
    if (counts === 'cancelled') return false;
    if (counts) scanned.push({ ref, counts });
  }
  const warning = phiWarning(
    scanned.map((s) => ({ label: datasetLabel(s.ref), counts: s.counts.counts })),
    action,
  );
  if (!warning) return true;
  const go = action === 'upload' ? 'Upload Anyway' : 'Submit Anyway';
  const pick = await vscode.window.showWarningMessage(
    warning,
    {
      modal: true,
      detail: 'Counts from the last identifier scan. Write a redacted copy from the scan result to share the data without them.',
    },
    go,
    'Show Scan',
  );
  if (pick === 'Show Scan') {
    const first = scanned.find((s) => identifierTotal(s.counts.counts) > 0)!;
    await vscode.commands.executeCommand('medrl.scanDatasetPhi', first.ref);
  }
  return pick === go;
}
