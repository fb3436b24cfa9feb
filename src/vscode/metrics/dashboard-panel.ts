import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { Ctx } from '../ctx';
import type { HostPool } from '../../core/remote/host-pool';
import { openWebviewPanel, type TypedWebviewPanel } from '../webview/webview-panel';
import { fromDashboard, toDashboard, type ToDashboard } from '../../protocol/dashboard';
import { openMetricsSource, type MetricsSource } from '../../core/metrics/run-metrics';
import { toJsonMetric, type JsonMetric } from '../../core/metrics/metric-value';
import type { Framework } from '../../core/metrics/metric-log-parser';
import { errorMessage, formatProblem } from '../../core/errors/located-error';

/** Something to chart: a run folder or a metrics file on a host. */
export interface DashboardTarget {
  host: string;
  path: string;
  framework?: Framework;
  name?: string;
}

/** How often a live run's file is read again (only the bytes after the last complete line). */
const POLL_MS = 1500;

interface Followed {
  id: string;
  target: DashboardTarget;
  source?: MetricsSource;
  live: boolean;
  error: string | null;
  problemsShown: string;
}

/**
 * A run dashboard: one webview with the runs' charts. Each run is loaded once, then polled from its last offset while it
 * runs; only the steps a poll added or changed are sent to the page.
 */
export function openDashboard(ctx: Ctx, pool: HostPool, targets: DashboardTarget[]): void {
  const title = targets.length === 1 ? `Metrics: ${targets[0]!.name ?? basename(targets[0]!.path)}` : `Compare ${targets.length} runs`;
  const runs: Followed[] = targets.map((target, i) => ({ id: `r${i}`, target, live: true, error: null, problemsShown: '' }));
  let disposed = false;
  let timer: NodeJS.Timeout | undefined;
  let started = false;

  const panel: TypedWebviewPanel<typeof toDashboard> = openWebviewPanel(ctx, {
    viewType: 'medrl.dashboard',
    title,
    bundle: 'dashboard',
    toWebview: toDashboard,
    fromWebview: fromDashboard,
    retainContextWhenHidden: true,
    onMessage: async (msg, post) => {
      if (msg.type === 'ready') {
        post({ type: 'runs', runs: runs.map((r) => ({ id: r.id, label: r.target.name ?? basename(r.target.path), where: `${r.target.host}:${r.target.path}` })) });
        if (!started) {
          started = true;
          void loop();
        } else {
          // The page was reloaded: send everything again.
          for (const r of runs) if (r.source) sendAll(r);
        }
      } else if (msg.type === 'exportCsv') {
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir());
        const uri = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.joinPath(folder, msg.suggestedName), filters: { CSV: ['csv'] }, saveLabel: 'Export CSV' });
        if (!uri) return;
        await writeFile(uri.fsPath, msg.csv);
        ctx.log.info(`metrics: exported the visible data to ${uri.fsPath}`);
        void vscode.window.showInformationMessage(`MedRL: metrics saved to ${uri.fsPath}`);
      }
    },
  });

  const post = (m: ToDashboard) => {
    if (!disposed) panel.post(m);
  };

  function sendAll(r: Followed): void {
    // A fresh series copy with every step marked changed.
    const all = r.source!.series;
    const steps = all.steps.slice();
    const metrics: Record<string, (JsonMetric | null)[]> = {};
    for (const k of all.metricNames()) metrics[k] = all.column(k).map((v) => (v === undefined ? null : toJsonMetric(v)));
    post({ type: 'points', runId: r.id, changes: { steps, observedAt: steps.map(() => null), metrics } });
  }

  async function pollOne(r: Followed, first: boolean): Promise<void> {
    try {
      if (!r.source) {
        if (r.target.host !== 'local' && !vscode.workspace.isTrusted) throw new Error(`not connecting to ${r.target.host}: the workspace is not trusted`);
        const host = await pool.get(r.target.host);
        r.source = await openMetricsSource(host, r.target.path, { framework: r.target.framework, trackChanges: true });
      }
      const src = r.source;
      const ended = src.ended ? await src.ended() : false;
      // Steps read after the first load are stamped with the time they were seen (wall time for logs without timings).
      await src.poll({ live: !first, final: ended });
      if (ended) r.live = false;
      r.error = null;
      const changes = src.series.takeChanges();
      if (changes.steps.length) post({ type: 'points', runId: r.id, changes });
      const problems = (await src.problems()).slice(0, 50).map(formatProblem);
      // A note's count grows as the run goes on: sent again when any text changed.
      const notes = src.notes();
      const shown = [...notes, ...problems].join('\n');
      if (shown !== r.problemsShown || first || !r.live) {
        r.problemsShown = shown;
        post({ type: 'status', runId: r.id, framework: src.framework ?? null, source: src.source ?? null, live: r.live, error: null, problems, notes });
      }
    } catch (err) {
      const message = errorMessage(err);
      if (message !== r.error) ctx.log.error(`metrics: ${r.target.host}:${r.target.path}: ${message}`);
      r.error = message;
      post({ type: 'status', runId: r.id, framework: r.source?.framework ?? null, source: r.source?.source ?? null, live: r.live, error: message, problems: [], notes: [] });
    }
  }

  async function loop(): Promise<void> {
    let first = true;
    while (!disposed) {
      await Promise.all(runs.filter((r) => r.live).map((r) => pollOne(r, first)));
      first = false;
      if (!runs.some((r) => r.live)) return;
      await new Promise<void>((res) => (timer = setTimeout(res, POLL_MS)));
    }
  }

  panel.panel.onDidDispose(() => {
    disposed = true;
    if (timer) clearTimeout(timer);
  });
}

function basename(p: string): string {
  const parts = p.replace(/\/+$/, '').split('/');
  return parts[parts.length - 1] || p;
}
