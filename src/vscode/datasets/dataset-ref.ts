import * as vscode from 'vscode';
import { LOCAL_HOST } from '../../core/config/workspace-config';
import { activeFileUri } from '../active-file';
import { datasetFormatOf } from '../../core/datasets/dataset-reader';
import type { Deps } from '../deps';
import { pickDataset } from '../pickers';

/** A dataset file: a host name and the absolute path on that host. */
export interface DatasetRef {
  host: string;
  path: string;
}

export function refKey(ref: DatasetRef): string {
  return `${ref.host}:${ref.path}`;
}

export function isLocal(ref: DatasetRef): boolean {
  return ref.host === LOCAL_HOST;
}

/** The dataset a command was called with: a file URI (explorer, editor, other features), a tree node or `{host, path}`. */
export function datasetRefFromArg(arg: unknown): DatasetRef | undefined {
  if (arg instanceof vscode.Uri) return arg.scheme === 'file' ? { host: LOCAL_HOST, path: arg.fsPath } : undefined;
  if (typeof arg === 'string') return { host: LOCAL_HOST, path: arg };
  if (typeof arg === 'object' && arg !== null) {
    const a = arg as { host?: unknown; path?: unknown; ref?: unknown };
    if (a.ref) return datasetRefFromArg(a.ref);
    if (typeof a.path === 'string') return { host: typeof a.host === 'string' ? a.host : LOCAL_HOST, path: a.path };
  }
  return undefined;
}

/** The file of the active tab when it is a dataset file (by its extension): a command run from the palette acts on it. */
export function activeDatasetFile(): DatasetRef | undefined {
  const uri = activeFileUri();
  return uri?.scheme === 'file' && datasetFormatOf(uri.fsPath) ? { host: LOCAL_HOST, path: uri.fsPath } : undefined;
}

/**
 * The dataset file a command acts on: its argument (a Datasets view node, an Explorer file, a ref), the dataset file of
 * the active editor, or one picked under the dataset roots; undefined when the user backs out.
 */
export async function datasetArg(deps: Deps, arg: unknown, what: string): Promise<DatasetRef | undefined> {
  if (arg !== undefined) {
    const ref = datasetRefFromArg(arg);
    if (!ref) throw new Error('no dataset file: run this from the Datasets view, the Explorer or an open .json/.jsonl/.parquet/.csv file');
    return ref;
  }
  return activeDatasetFile() ?? (await pickDataset(deps, { title: `Dataset file to ${what}` }));
}
