import * as vscode from 'vscode';
import { posix } from 'node:path';
import type { HostPool } from '../../core/remote/host-pool';
import { openDataset } from '../../core/datasets/open-dataset';
import { readRows, type DatasetReader } from '../../core/datasets/dataset-reader';
import { searchDataset } from '../../core/datasets/search-dataset';
import { DATASET_KIND_LABELS } from '../../core/datasets/dataset-kinds';
import { formatBytes } from '../../core/format/bytes';
import { errorMessage } from '../../core/errors/located-error';
import { maskNames, maskString, maskStrings } from '../../core/phi/mask-text';
import { DatasetFromWebview, DatasetToWebview } from '../../protocol/dataset';
import { openWebviewPanel, type TypedWebviewPanel } from '../webview/webview-panel';
import type { Ctx } from '../ctx';
import type { DatasetInspections } from './dataset-inspections';
import { isLocal, refKey, type DatasetRef } from './dataset-ref';

const FIRST_ROWS = 100;

/**
 * The dataset preview: one panel per file. Rows are read on demand through the file's reader (range reads; the JSONL offset
 * index makes "row N" a seek), the inspection (kind, counts, problems) runs alongside, and search streams and can be cancelled.
 */
export class DatasetPreviews implements vscode.Disposable {
  private readonly open = new Map<string, { panel: TypedWebviewPanel<typeof DatasetToWebview>; goTo: (row: number) => void }>();

  constructor(
    private readonly ctx: Ctx,
    private readonly pool: HostPool,
    private readonly inspections: DatasetInspections,
  ) {}

  async show(ref: DatasetRef, row?: number): Promise<void> {
    const key = refKey(ref);
    const existing = this.open.get(key);
    if (existing) {
      existing.panel.panel.reveal();
      if (row !== undefined) existing.goTo(row);
      return;
    }
    const host = await this.pool.get(ref.host);
    const reader = await openDataset(host, ref.path);
    const title = `${posix.basename(ref.path)}${isLocal(ref) ? '' : ` (${ref.host})`}`;
    const life = new AbortController();
    let search: AbortController | undefined;
    const typed = openWebviewPanel(this.ctx, {
      viewType: 'medrl.datasetPreview',
      title,
      bundle: 'dataset',
      toWebview: DatasetToWebview,
      fromWebview: DatasetFromWebview,
      retainContextWhenHidden: true,
      // The page asks for its rows again itself; the summary's problems come only from here.
      phiMask: { mask: maskDatasetMessage, resend: () => void this.postSummary(ref, typed.post, life.signal) },
      onMessage: async (msg, post) => {
        switch (msg.type) {
          case 'ready':
            post({
              type: 'open',
              title,
              host: ref.host,
              path: ref.path,
              format: reader.format,
              size: reader.size,
              sizeLabel: formatBytes(reader.size),
              columns: reader.declaredColumns ?? [],
              rowCount: reader.knownRowCount,
            });
            await this.postRows(reader, post, row !== undefined ? Math.max(0, row - 10) : 0, FIRST_ROWS, life.signal);
            if (row !== undefined) post({ type: 'goTo', row });
            void this.postSummary(ref, post, life.signal);
            return;
          case 'getRows':
            return this.postRows(reader, post, msg.start, msg.count, life.signal);
          case 'search': {
            // A new search stops the one before it.
            search?.abort();
            const ctl = new AbortController();
            search = ctl;
            return this.postSearch(reader, msg.id, msg.query, post, AbortSignal.any([ctl.signal, life.signal]));
          }
          case 'cancelSearch':
            search?.abort();
            return;
        }
      },
    });
    const goTo = (r: number) => typed.post({ type: 'goTo', row: r });
    this.open.set(key, { panel: typed, goTo });
    typed.panel.onDidDispose(() => {
      life.abort();
      this.open.delete(key);
    });
  }

  /** Streams a search's matches to the page as they are found; a stopped search ends quietly. */
  private async postSearch(
    reader: DatasetReader,
    id: number,
    query: string,
    post: (m: DatasetToWebview) => void,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      for await (const batch of searchDataset(reader, query, { signal })) {
        post({ type: 'searchResults', id, matches: batch.matches, scanned: batch.scanned, done: false });
      }
      post({ type: 'searchResults', id, matches: [], scanned: -1, done: true });
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  }

  private async postRows(
    reader: DatasetReader,
    post: (m: DatasetToWebview) => void,
    start: number,
    count: number,
    signal: AbortSignal,
  ): Promise<void> {
    const rows = await readRows(reader, start, count + 1, signal);
    post({ type: 'rows', start, rows: rows.slice(0, count), end: rows.length <= count });
  }

  private async postSummary(ref: DatasetRef, post: (m: DatasetToWebview) => void, signal: AbortSignal): Promise<void> {
    try {
      const s = await this.inspections.inspect(ref, { signal, onProgress: (rows) => post({ type: 'progress', rows }) });
      post({
        type: 'summary',
        kind: s.kind,
        kindLabel: DATASET_KIND_LABELS[s.kind],
        rows: s.rows,
        rowsOk: s.rowsOk,
        columns: s.columns,
        dataSources: s.dataSources,
        abilities: s.abilities,
        problems: s.problems,
        problemCount: s.problemCount,
        maxPromptTokens: s.tokenBudget.maxPromptTokens,
      });
    } catch (err) {
      if (!signal.aborted) post({ type: 'error', message: errorMessage(err) });
    }
  }

  dispose(): void {
    for (const { panel } of this.open.values()) panel.panel.dispose();
  }
}

/** The file's text in a message masked: rows, column names, search snippets, and the problems and errors that can quote a row. */
function maskDatasetMessage(m: DatasetToWebview): DatasetToWebview {
  switch (m.type) {
    case 'rows':
      return { ...m, rows: maskStrings(m.rows) };
    case 'searchResults':
      return { ...m, matches: maskStrings(m.matches) };
    case 'open':
      return { ...m, columns: maskNames(m.columns) };
    case 'summary':
      return { ...m, columns: maskNames(m.columns), problems: m.problems.map((p) => ({ ...p, reason: maskString(p.reason) })) };
    case 'error':
      return { ...m, message: maskString(m.message) };
    default:
      return m;
  }
}
