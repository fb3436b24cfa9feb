import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import { openDataset } from '../../core/datasets/open-dataset';
import { inspectDataset, type DatasetSummary } from '../../core/datasets/inspect-dataset';
import { errorMessage } from '../../core/errors/located-error';
import type { Ctx } from '../ctx';
import { isLocal, refKey, type DatasetRef } from './dataset-ref';
import { rowAndField } from '../../core/format/row-line';

type InspectionState =
  { state: 'running' } | { state: 'done'; summary: DatasetSummary; mtimeMs: number } | { state: 'failed'; error: string };

/** Files up to this size are inspected as soon as the tree shows them; larger ones when the user validates or previews them. */
export const AUTO_INSPECT_BYTES = 64 * 1024 * 1024;

/**
 * The inspection (kind, rows, breakdowns, problems) of each dataset file, shared by the tree, the preview and the commands.
 * Problems of local files go to the Problems panel at their lines.
 */
export class DatasetInspections implements vscode.Disposable {
  private readonly results = new Map<string, InspectionState>();
  private readonly running = new Map<string, Promise<DatasetSummary>>();
  private readonly changed = new vscode.EventEmitter<DatasetRef>();
  readonly onDidChange = this.changed.event;
  private readonly diagnostics = vscode.languages.createDiagnosticCollection('medrl-datasets');

  constructor(
    private readonly ctx: Ctx,
    private readonly pool: HostPool,
  ) {}

  /** Inspections the tree asks for run one at a time, so a folder of files does not read them all at once. */
  private queue: Promise<unknown> = Promise.resolve();

  get(ref: DatasetRef): InspectionState | undefined {
    return this.results.get(refKey(ref));
  }

  /** Inspects a file unless an inspection of the same version is cached or running. */
  async inspect(
    ref: DatasetRef,
    opts: { force?: boolean; signal?: AbortSignal; onProgress?: (rows: number) => void } = {},
  ): Promise<DatasetSummary> {
    const key = refKey(ref);
    const host = await this.pool.get(ref.host);
    const stat = await host.stat(ref.path).catch((err: unknown) => {
      // A file that cannot be read (gone, or outside the workspace in Restricted Mode) says why on its tree item.
      this.results.set(key, { state: 'failed', error: errorMessage(err) });
      this.changed.fire(ref);
      throw err;
    });
    const cached = this.results.get(key);
    if (!opts.force && cached?.state === 'done' && cached.mtimeMs === stat.mtimeMs && cached.summary.size === stat.size)
      return cached.summary;
    const pending = this.running.get(key);
    if (pending && !opts.force) return pending;
    this.results.set(key, { state: 'running' });
    this.changed.fire(ref);
    const run = (async () => {
      const started = performance.now();
      const summary = await inspectDataset(await openDataset(host, ref.path), { signal: opts.signal, onProgress: opts.onProgress });
      this.ctx.log.info(
        `dataset ${key}: ${summary.kind}, ${summary.rows} row(s), ${summary.problemCount} problem(s), in ${(performance.now() - started).toFixed(0)} ms`,
      );
      return summary;
    })();
    this.running.set(key, run);
    try {
      const summary = await run;
      this.results.set(key, { state: 'done', summary, mtimeMs: stat.mtimeMs });
      if (isLocal(ref)) this.showProblems(ref, summary);
      return summary;
    } catch (err) {
      if (opts.signal?.aborted) {
        // Cancelled (the preview closed, or the user pressed Cancel): nothing is known about the file.
        this.results.delete(key);
        throw err;
      }
      this.results.set(key, { state: 'failed', error: errorMessage(err) });
      if (isLocal(ref))
        this.diagnostics.set(vscode.Uri.file(ref.path), [
          new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), errorMessage(err), vscode.DiagnosticSeverity.Error),
        ]);
      throw err;
    } finally {
      this.running.delete(key);
      this.changed.fire(ref);
    }
  }

  /** Queues an inspection; its end (or failure, shown on the file's tree item) fires onDidChange. */
  inspectInBackground(ref: DatasetRef): void {
    this.results.set(refKey(ref), { state: 'running' });
    this.queue = this.queue
      .then(() => this.inspect(ref, { force: true }))
      .catch((err: unknown) => this.ctx.log.warn(`dataset ${refKey(ref)}: ${errorMessage(err)}`));
  }

  private showProblems(ref: DatasetRef, summary: DatasetSummary): void {
    const diags = summary.problems.map((p) => {
      const line = Math.max(0, (p.line ?? 1) - 1);
      const where = rowAndField(p);
      const d = new vscode.Diagnostic(
        new vscode.Range(line, 0, line, 0),
        `${where ? `${where}: ` : ''}${p.reason}`,
        p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
      );
      d.source = 'MedRL dataset';
      return d;
    });
    this.diagnostics.set(vscode.Uri.file(ref.path), diags);
  }

  dispose(): void {
    this.changed.dispose();
    this.diagnostics.dispose();
  }
}
