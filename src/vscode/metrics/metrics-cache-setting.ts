import * as vscode from 'vscode';
import { MetricsCache } from '../../core/metrics/metrics-cache';
import { CacheFillWorkers } from '../../core/metrics/cache-fill-workers';
import type { Ctx } from '../ctx';

/** Every big local log's parse shares these workers: ten runs opened in two dashboards, or runs ending, take turns. */
const cacheFillWorkers = new CacheFillWorkers();

/** The metrics cache in the extension's storage, or none when `medrl.metrics.cacheSizeMB` is 0 (what it kept is removed). */
export function metricsCache(ctx: Ctx): MetricsCache | undefined {
  const dir = vscode.Uri.joinPath(ctx.extension.globalStorageUri, 'metrics-cache').fsPath;
  const mb = vscode.workspace.getConfiguration('medrl.metrics').get<number>('cacheSizeMB', 1024);
  return MetricsCache.sized(dir, mb, (message) => ctx.log.warn(message), cacheFillWorkers);
}
