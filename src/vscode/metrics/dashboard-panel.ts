import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { Deps } from '../deps';
import { openWebviewPanel, type TypedWebviewPanel } from '../webview/webview-panel';
import { fromDashboard, toDashboard, type FromDashboard, type ToDashboard } from '../../protocol/dashboard';
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
export function openDashboard(deps: Deps, targets: DashboardTarget[]): void {
  const title = targets.length === 1 ? `Metrics: ${targets[0]!.name ?? basename(targets[0]!.path)}` : `Compare ${targets.length} runs`;
  const dashboard = new Dashboard(deps, targets);
  const panel: TypedWebviewPanel<typeof toDashboard> = openWebviewPanel(deps.ctx, {
    viewType: 'medrl.dashboard',
    title,
    bundle: 'dashboard',
    toWebview: toDashboard,
    fromWebview: fromDashboard,
    retainContextWhenHidden: true,
    onMessage: (msg) => dashboard.onMessage(msg),
  });
  dashboard.post = panel.post;
  panel.panel.onDidDispose(() => dashboard.dispose());
}

/** The runs one dashboard follows, and the loop that polls them while the panel is open. */
class Dashboard {
  private readonly runs: Followed[];
  private disposed = false;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  /** The panel's post; set once the panel exists (the page's first message comes after). */
  post: (m: ToDashboard) => void = () => {};

  constructor(
    private readonly deps: Deps,
    targets: DashboardTarget[],
  ) {
    this.runs = targets.map((target, i) => ({ id: `r${i}`, target, live: true, error: null, problemsShown: '' }));
  }

  private send(m: ToDashboard): void {
    if (!this.disposed) this.post(m);
  }

  async onMessage(msg: FromDashboard): Promise<void> {
    if (msg.type === 'ready') {
      this.send({
        type: 'runs',
        runs: this.runs.map((r) => ({
          id: r.id,
          label: r.target.name ?? basename(r.target.path),
          where: `${r.target.host}:${r.target.path}`,
        })),
      });
      if (!this.started) {
        this.started = true;
        void this.loop();
      } else {
        // The page was reloaded: send everything again.
        for (const r of this.runs) if (r.source) this.sendAll(r);
      }
    } else if (msg.type === 'exportCsv') {
      await this.exportCsv(msg.suggestedName, msg.csv);
    }
  }

  private async exportCsv(suggestedName: string, csv: string): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir());
    const uri = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(folder, suggestedName),
      filters: { CSV: ['csv'] },
      saveLabel: 'Export CSV',
    });
    if (!uri) return;
    await writeFile(uri.fsPath, csv);
    this.deps.ctx.log.info(`metrics: exported the visible data to ${uri.fsPath}`);
    void vscode.window.showInformationMessage(`MedRL: metrics saved to ${uri.fsPath}`);
  }

  private sendAll(r: Followed): void {
    // A fresh series copy with every step marked changed.
    const all = r.source!.series;
    const steps = all.steps.slice();
    const metrics: Record<string, (JsonMetric | null)[]> = {};
    for (const k of all.metricNames()) metrics[k] = all.column(k).map((v) => (v === undefined ? null : toJsonMetric(v)));
    this.send({ type: 'points', runId: r.id, changes: { steps, observedAt: steps.map(() => null), metrics } });
  }

  private async pollOne(r: Followed, first: boolean): Promise<void> {
    try {
      if (!r.source) {
        if (r.target.host !== 'local' && !vscode.workspace.isTrusted)
          throw new Error(`not connecting to ${r.target.host}: the workspace is not trusted`);
        const host = await this.deps.pool.get(r.target.host);
        r.source = await openMetricsSource(host, r.target.path, { framework: r.target.framework, trackChanges: true });
      }
      const src = r.source;
      const ended = src.ended ? await src.ended() : false;
      // Steps read after the first load are stamped with the time they were seen (wall time for logs without timings).
      await src.poll({ live: !first, final: ended });
      if (ended) r.live = false;
      r.error = null;
      const changes = src.series.takeChanges();
      if (changes.steps.length) this.send({ type: 'points', runId: r.id, changes });
      await this.sendStatus(r, src, first);
    } catch (err) {
      const message = errorMessage(err);
      if (message !== r.error) this.deps.ctx.log.error(`metrics: ${r.target.host}:${r.target.path}: ${message}`);
      r.error = message;
      this.send({
        type: 'status',
        runId: r.id,
        framework: r.source?.framework ?? null,
        source: r.source?.source ?? null,
        live: r.live,
        error: message,
        problems: [],
        notes: [],
      });
    }
  }

  /** A run's status line, its problems and notes; sent when any of it changed (a note's count grows as the run goes on). */
  private async sendStatus(r: Followed, src: MetricsSource, first: boolean): Promise<void> {
    const problems = (await src.problems()).slice(0, 50).map(formatProblem);
    const notes = src.notes();
    const shown = [...notes, ...problems].join('\n');
    if (shown !== r.problemsShown || first || !r.live) {
      r.problemsShown = shown;
      this.send({
        type: 'status',
        runId: r.id,
        framework: src.framework ?? null,
        source: src.source ?? null,
        live: r.live,
        error: null,
        problems,
        notes,
      });
    }
  }

  private async loop(): Promise<void> {
    let first = true;
    while (!this.disposed) {
      await Promise.all(this.runs.filter((r) => r.live).map((r) => this.pollOne(r, first)));
      first = false;
      if (!this.runs.some((r) => r.live)) return;
      await new Promise<void>((res) => (this.timer = setTimeout(res, POLL_MS)));
    }
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

function basename(p: string): string {
  const parts = p.replace(/\/+$/, '').split('/');
  return parts[parts.length - 1] || p;
}
