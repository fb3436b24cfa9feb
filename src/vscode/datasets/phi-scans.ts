import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import type { FileStat } from '../../core/remote/host';
import { newPhiSummary, openDatasetForPhi } from '../../core/phi/scan-dataset';
import { scanForPhi } from '../../core/phi/scan-range';
import { ScanCountsStore, type ScanCounts } from '../../core/phi/scan-counts';
import type { Ctx } from '../ctx';
import { refKey, type DatasetRef } from './dataset-ref';

/** How often a running scan reports its rows: rows without identifiers yield nothing, so a timer reports. */
const PROGRESS_MS = 250;

/**
 * The identifier scans of dataset files: counts per category kept in the workspace's state with the file's size and mtime,
 * so the Datasets view's tooltips and the upload and submit warnings read them without scanning again. The text found is
 * dropped as the scan goes.
 */
export class PhiScans implements vscode.Disposable {
  private readonly store: ScanCountsStore;
  private readonly changed = new vscode.EventEmitter<DatasetRef>();
  readonly onDidChange = this.changed.event;

  constructor(
    ctx: Ctx,
    private readonly pool: HostPool,
  ) {
    this.store = new ScanCountsStore(ctx.extension.workspaceState);
  }

  /** The counts of the file as the tree listed it (its size and mtime), without asking the host. */
  peek(ref: DatasetRef, stat: Pick<FileStat, 'size' | 'mtimeMs'>): ScanCounts | undefined {
    return this.store.peek(refKey(ref), stat);
  }

  /** The file's size now and the counts of that version: undefined when it was never scanned or changed since. */
  async current(ref: DatasetRef): Promise<{ size: number; counts?: ScanCounts }> {
    const stat = await (await this.pool.get(ref.host)).stat(ref.path);
    return { size: stat.size, counts: await this.store.get(refKey(ref), stat) };
  }

  async scan(ref: DatasetRef, opts: { signal?: AbortSignal; onProgress?: (rows: number) => void } = {}): Promise<ScanCounts> {
    const host = await this.pool.get(ref.host);
    const stat = await host.stat(ref.path);
    const summary = newPhiSummary();
    const reader = await openDatasetForPhi(host, ref.path);
    const timer = setInterval(() => opts.onProgress?.(summary.rows), PROGRESS_MS);
    try {
      // No format: the findings are only counted into the summary, never written.
      for await (const _ of scanForPhi(host, reader, summary, { signal: opts.signal })) {
        // Nothing is yielded without a format.
      }
    } finally {
      clearInterval(timer);
    }
    opts.signal?.throwIfAborted();
    const counts: ScanCounts = { size: stat.size, mtimeMs: stat.mtimeMs, scannedAt: Date.now(), ...summary };
    await this.store.set(refKey(ref), counts);
    this.changed.fire(ref);
    return counts;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
