import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import { errorMessage } from '../../core/errors/located-error';
import type { RunInfo } from '../../core/runs/list-runs';
import {
  activeRunsSummary,
  endedMessage,
  goneMessage,
  lastHeadline,
  parseWatched,
  runsToAnnounce,
  storedWatched,
  type Announcement,
  type LastMetric,
  type WatchedRun,
} from '../../core/runs/watched-runs';
import type { Ctx } from '../ctx';
import { metricsCache } from '../metrics/metrics-cache-setting';
import type { RunsRefresh, RunsTree } from './runs-tree';

/** Workspace state key of the runs submitted from this workspace and not announced yet (hosts and ids only). */
const WATCHED_KEY = 'medrl.watchedRuns';
/** How soon to list again while a watched run is not listed as active (its host unreachable, or listed before it was). */
const RETRY_MS = 5000;

/**
 * Tells the user about runs without the Runs view: a status bar item while runs are active, and one notification when a
 * run submitted from this workspace ends, even if it ended while the window was closed. It follows the runs tree's
 * refreshes, which begin when medrl.yaml is loaded at activation, whether or not the view was ever opened.
 */
export class RunWatch implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private watched: WatchedRun[];
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: Ctx,
    private readonly pool: HostPool,
    private readonly tree: RunsTree,
  ) {
    this.item = vscode.window.createStatusBarItem('medrl.activeRuns', vscode.StatusBarAlignment.Left);
    this.item.name = 'MedRL Runs';
    this.item.command = 'medrl.runs.focus';
    this.watched = parseWatched(ctx.extension.workspaceState.get(WATCHED_KEY));
    this.disposables = [this.item, tree.onDidRefresh((r) => this.refreshed(r))];
  }

  /** A run just submitted from this window: announced once when it ends. */
  watch(host: string, id: string): void {
    this.watched.push({ host, id, since: Date.now() });
    this.save();
  }

  private refreshed({ hosts, startedAt }: RunsRefresh): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { announce, waiting, retry } = runsToAnnounce(this.watched, hosts, startedAt);
    if (announce.length) {
      // Kept before anything is shown, so a run is announced at most once even if the window closes right after.
      this.watched = waiting;
      this.save();
      for (const a of announce) void this.announce(a);
    }
    this.showActive(hosts.flatMap((h) => h.runs));
    // The tree refreshes itself only while some run is active: a watched run it did not list as such needs asking again.
    if (retry && !this.tree.autoRefreshing)
      this.timer = setTimeout(
        () => void this.tree.refresh().catch((err: unknown) => this.ctx.log.error(`refreshing runs: ${errorMessage(err)}`)),
        RETRY_MS,
      );
  }

  private showActive(runs: RunInfo[]): void {
    const summary = activeRunsSummary(runs);
    if (!summary) return this.item.hide();
    this.item.text = `$(sync~spin) ${summary.text}`;
    this.item.tooltip = summary.tooltip;
    this.item.accessibilityInformation = { label: `MedRL: ${summary.text} active` };
    this.item.show();
  }

  private save(): void {
    void this.ctx.extension.workspaceState.update(WATCHED_KEY, storedWatched(this.watched));
  }

  private async announce(a: Announcement): Promise<void> {
    if (a.kind === 'gone') {
      this.ctx.log.warn(`run ${a.watched.id} is no longer listed on ${a.watched.host}`);
      void vscode.window.showWarningMessage(`MedRL: ${goneMessage(a.watched)}`);
      return;
    }
    const { run } = a;
    // The id, host and state only: the message may quote the log, which may hold medical text.
    this.ctx.log.info(`run ${run.record.id} on ${run.host} ended: ${run.state}`);
    if (run.state === 'succeeded') {
      const pick = await vscode.window.showInformationMessage(`MedRL: ${endedMessage(run, await this.lastMetric(run))}`, 'Open Dashboard');
      if (pick)
        void vscode.commands.executeCommand('medrl.openRunDashboard', {
          host: run.host,
          dir: run.record.dir,
          framework: run.record.framework,
          name: run.record.name,
        });
    } else if (run.state === 'cancelled') {
      void vscode.window.showInformationMessage(`MedRL: ${endedMessage(run)}`);
    } else {
      const show = run.state === 'failed' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
      const pick = await show(`MedRL: ${endedMessage(run)}`, 'Show Log');
      if (pick) void vscode.commands.executeCommand('medrl.followRunLogs', { host: run.host, id: run.record.id });
    }
  }

  /** The run's last headline metric; a run whose metrics cannot be read is still announced, without it. */
  private async lastMetric(run: RunInfo): Promise<LastMetric | undefined> {
    try {
      return await lastHeadline(await this.pool.get(run.host), run, metricsCache(this.ctx));
    } catch (err) {
      this.ctx.log.warn(`metrics of ${run.record.id}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
