import * as vscode from 'vscode';
import { workspaceHosts, type ResolvedHost } from '../../core/config/workspace-config';
import { errorMessage } from '../../core/errors/located-error';
import { formatBytes } from '../../core/format/bytes';
import type { EnvReport } from '../../core/remote/env-check';
import type { HostPool } from '../../core/remote/host-pool';
import { queryHostStatus, type HostStatus } from '../../core/runs/host-status';
import { SshHost, type SshHostState } from '../../core/remote/ssh-host';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { treeGate, untrustedNode, type MessageNode } from '../tree-gate';

/** A host in the tree (its children are its status), a line of detail under it, or a message instead of either. */
export type HostsNode =
  { kind: 'host'; entry: ResolvedHost } | { kind: 'detail'; item: vscode.TreeItem; children?: HostsNode[] } | MessageNode;

function detail(
  label: string,
  description: string | undefined,
  icon: string,
  opts: { tooltip?: string; children?: HostsNode[]; color?: string; id?: string } = {},
): HostsNode {
  const item = new vscode.TreeItem(
    label,
    opts.children?.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  item.description = description;
  item.iconPath = new vscode.ThemeIcon(icon, opts.color ? new vscode.ThemeColor(opts.color) : undefined);
  item.tooltip = opts.tooltip;
  if (opts.id) item.id = opts.id;
  return { kind: 'detail', item, children: opts.children };
}

function gib(mib: number | undefined): string {
  return mib === undefined ? '?' : `${(mib / 1024).toFixed(1)}`;
}

/**
 * The medrl.hosts view: each host with its connection state; expanded, its GPUs (and their processes), free disk in
 * the runs folder, active runs and the last environment check. A host's status is one command on it.
 */
export class HostsTree implements vscode.TreeDataProvider<HostsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<HostsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly status = new Map<string, Promise<HostStatus>>();
  private readonly states = new Map<string, SshHostState>();
  /** Hosts whose state the tree follows (a host the pool replaced is followed anew). */
  private readonly watched = new WeakSet<SshHost>();
  private readonly env = new Map<string, EnvReport>();

  constructor(
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
  ) {
    this.disposables.push(state.onDidChange(() => this.refresh()));
  }

  /** Drops cached statuses (all, or one host's) so the next look asks the hosts again. */
  refresh(name?: string): void {
    if (name) this.status.delete(name);
    else this.status.clear();
    this.changed.fire(undefined);
  }

  setEnvironment(report: EnvReport): void {
    this.env.set(report.host, report);
    this.changed.fire(undefined);
  }

  /** An SSH host's connection state as last seen (undefined until the view has shown the host). */
  connectionState(name: string): SshHostState['state'] | undefined {
    return this.states.get(name)?.state;
  }

  hosts(): ResolvedHost[] {
    return this.state.config ? workspaceHosts(this.state.config) : [];
  }

  /** Follows an SSH host's connection state, so the tree shows connecting / connected / unreachable as it happens. */
  private async watch(entry: ResolvedHost): Promise<void> {
    if (entry.kind !== 'ssh') return;
    const host = await this.pool.get(entry.name);
    if (!(host instanceof SshHost) || this.watched.has(host)) return;
    this.watched.add(host);
    this.states.set(entry.name, host.state);
    this.disposables.push(
      host.onStateChange((s) => {
        this.states.set(entry.name, s);
        if (s.state !== 'connected' && s.state !== 'connecting') this.status.delete(entry.name);
        this.changed.fire(undefined);
      }),
    );
  }

  async getChildren(node?: HostsNode): Promise<HostsNode[]> {
    if (!node) {
      const gate = treeGate(this.state, 'content');
      if (gate) return gate;
      const hosts = this.hosts();
      await Promise.all(hosts.map((h) => this.watch(h).catch(() => undefined)));
      return hosts.map((entry) => ({ kind: 'host', entry }));
    }
    if (node.kind === 'message') return [];
    if (node.kind === 'detail') return node.children ?? [];
    const { entry } = node;
    if (!vscode.workspace.isTrusted)
      return [untrustedNode('Untrusted workspace', { icon: 'workspace-untrusted', description: 'trust it to connect' })];
    let status = this.status.get(entry.name);
    if (!status) {
      status = this.pool.get(entry.name).then((h) => queryHostStatus(h, entry));
      this.status.set(entry.name, status);
    }
    try {
      return this.statusNodes(entry, await status);
    } catch (err) {
      this.status.delete(entry.name);
      const item = detail(errorMessage(err).split('\n')[0]!, undefined, 'error', {
        tooltip: errorMessage(err),
        color: 'problemsErrorIcon.foreground',
      });
      if (item.kind === 'detail') item.item.command = { command: 'medrl.hosts.connect', title: 'Connect', arguments: [node] };
      return [item];
    }
  }

  private statusNodes(entry: ResolvedHost, s: HostStatus): HostsNode[] {
    const id = (k: string) => `host:${entry.name}:${k}`;
    const out: HostsNode[] = [];
    if (s.gpuError) out.push(detail('No GPU', s.gpuError, 'circle-slash', { id: id('gpus') }));
    for (const g of s.gpus) {
      const procs = s.processes.filter((p) => p.gpuUuid === g.uuid);
      out.push(
        detail(
          `GPU ${g.index}: ${g.name}`,
          `${gib(g.memoryUsedMiB)}/${gib(g.memoryTotalMiB)} GiB · ${g.utilizationPercent ?? '?'}%${procs.length ? ` · ${procs.length} process(es)` : ''}`,
          'chip',
          {
            id: id(`gpu${g.index}`),
            tooltip: `${g.name} (${g.uuid})\nmemory ${g.memoryUsedMiB ?? '?'} / ${g.memoryTotalMiB ?? '?'} MiB, utilisation ${g.utilizationPercent ?? '?'}%, ${g.temperatureC ?? '?'} °C, ${g.powerW ?? '?'} W\ndriver ${g.driverVersion ?? '?'}`,
            children: procs.map((p) => detail(`${p.name} [${p.pid}]`, `${p.usedMemoryMiB ?? '?'} MiB`, 'pulse')),
          },
        ),
      );
    }
    if (s.disk)
      out.push(
        detail('Disk', `${formatBytes(s.disk.availableBytes)} free of ${formatBytes(s.disk.totalBytes)}`, 'database', {
          id: id('disk'),
          tooltip: `runs folder ${entry.runsDir} (on ${s.disk.path})`,
        }),
      );
    out.push(
      detail('Active runs', `${s.activeRuns.length} of ${s.runCount}`, 'run-all', {
        id: id('runs'),
        children: s.activeRuns.map((r) => detail(r, undefined, 'play-circle')),
      }),
    );
    const env = this.env.get(entry.name);
    if (env) {
      const torch = env.packages.torch ? ` · torch ${env.packages.torch}` : '';
      out.push(
        detail(
          'Environment',
          `Python ${env.python}${torch}${env.warnings.length ? ` · ${env.warnings.length} warning(s)` : ''}`,
          env.warnings.length ? 'warning' : 'check',
          {
            id: id('env'),
            color: env.warnings.length ? 'problemsWarningIcon.foreground' : undefined,
            children: [
              ...env.warnings.map((w) => detail(w, undefined, 'warning', { tooltip: w, color: 'problemsWarningIcon.foreground' })),
              detail('CUDA', `${env.cuda ?? 'none'} · driver ${env.driver ?? 'none'} · ${env.gpuCount} GPU(s)`, 'chip'),
              ...Object.entries(env.packages).map(([name, v]) => detail(name, v ?? 'not installed', v ? 'package' : 'dash')),
            ],
          },
        ),
      );
    }
    for (const p of s.problems)
      out.push(detail(p.message, undefined, 'warning', { tooltip: `${p.file ?? ''}${p.line ? `:${p.line}` : ''} ${p.message}` }));
    return out;
  }

  getTreeItem(node: HostsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'message':
      case 'detail':
        return node.item;
      case 'host':
        return node.entry.kind === 'local'
          ? localHostItem(node.entry)
          : sshHostItem(node.entry, this.states.get(node.entry.name) ?? { state: 'disconnected' });
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

function localHostItem(entry: ResolvedHost): vscode.TreeItem {
  const item = new vscode.TreeItem(entry.name, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `host:${entry.name}`;
  item.contextValue = 'medrl.host.local';
  item.iconPath = new vscode.ThemeIcon('device-desktop', new vscode.ThemeColor('testing.iconPassed'));
  item.description = 'local processes · ready';
  item.tooltip = new vscode.MarkdownString(
    `**local**: runs jobs as processes on this machine (no GPU needed).\n\nRuns folder: \`${entry.runsDir}\``,
  );
  return item;
}

const SSH_LOOK: Record<SshHostState['state'], [string, string | undefined, string]> = {
  connected: ['vm-active', 'testing.iconPassed', 'connected'],
  connecting: ['loading~spin', undefined, 'connecting…'],
  disconnected: ['vm-outline', undefined, 'not connected'],
  'auth-needed': ['key', 'problemsWarningIcon.foreground', 'auth needed'],
  unreachable: ['vm-connect', 'problemsErrorIcon.foreground', 'unreachable'],
};

function sshHostItem(entry: ResolvedHost, s: SshHostState): vscode.TreeItem {
  const item = new vscode.TreeItem(entry.name, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = `host:${entry.name}`;
  const [icon, color, word] = SSH_LOOK[s.state];
  const reason = 'reason' in s && s.reason ? s.reason : undefined;
  item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
  item.contextValue = `medrl.host.ssh.${s.state === 'connected' ? 'connected' : 'disconnected'}`;
  item.description = `ssh ${entry.sshAlias} · ${word}${reason && s.state !== 'disconnected' ? `: ${reason}` : ''}`;
  item.tooltip = new vscode.MarkdownString(
    `**${entry.name}**: \`ssh ${entry.sshAlias}\` (from ~/.ssh/config): ${word}${reason ? `\n\n${reason}` : ''}\n\nScheduler: ${entry.scheduler}\n\nRuns folder: \`${entry.runsDir}\``,
  );
  return item;
}
