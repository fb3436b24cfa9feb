import * as vscode from 'vscode';
import { findHost } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { errorMessage } from '../../core/errors/located-error';
import { followRun } from '../../core/runs/follow-log';
import type { RunInfo } from '../../core/runs/list-runs';
import type { Ctx } from '../ctx';
import type { WorkspaceConfigState } from '../config/workspace-config-state';

/** The runs whose logs the window follows, each into its own output channel, stopped when the window closes. */
export class RunLogFollowers implements vscode.Disposable {
  private readonly followers = new Map<string, { channel: vscode.OutputChannel; abort: AbortController }>();

  constructor(
    private readonly ctx: Ctx,
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
  ) {}

  /** Shows the run's log channel, following the log until the run ends if it is not followed yet. */
  async follow(run: RunInfo): Promise<void> {
    const key = `${run.host}/${run.record.id}`;
    const existing = this.followers.get(key);
    if (existing) {
      existing.channel.show(true);
      return;
    }
    // The host first: a run whose host cannot be reached leaves no empty channel behind.
    const runsDir = findHost(this.state.requireConfig(), run.host).runsDir;
    const host = await this.pool.get(run.host);
    // A second click while the host was connecting: the first one's channel is there now.
    if (this.followers.has(key)) return this.followers.get(key)!.channel.show(true);
    const channel = vscode.window.createOutputChannel(`MedRL Run: ${run.record.name} (${run.host})`);
    const abort = new AbortController();
    this.followers.set(key, { channel, abort });
    channel.show(true);
    void (async () => {
      try {
        for await (const line of followRun(host, runsDir, run.record, { signal: abort.signal, pollMs: 1000 })) channel.appendLine(line);
        channel.appendLine(`[MedRL] ${run.record.id} ended: the log is complete.`);
      } catch (err) {
        if (!abort.signal.aborted) {
          channel.appendLine(`[MedRL] following stopped: ${errorMessage(err)}`);
          this.ctx.log.error(`following ${run.record.id}: ${errorMessage(err)}`);
        }
      } finally {
        this.followers.delete(key);
      }
    })();
  }

  dispose(): void {
    for (const f of this.followers.values()) {
      f.abort.abort();
      f.channel.dispose();
    }
  }
}
