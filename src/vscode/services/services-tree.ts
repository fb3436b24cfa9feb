import * as vscode from 'vscode';
import type { ResolvedHost } from '../../core/config/workspace-config';
import type { JudgeConfig } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import type { PortForward } from '../../core/remote/host';
import { forwardService, listServices, probeServer, serviceStatus, type Service, type ServiceStatus } from '../../core/services/services';
import { errorMessage } from '../../core/errors/located-error';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { workspaceHosts } from '../../core/config/workspace-config';
import type { Ctx } from '../ctx';
import type { ServiceKeys } from './service-keys';
import { treeGate, type MessageNode } from '../tree-gate';

export type ServicesNode =
  | { kind: 'service'; host: ResolvedHost; svc: Service; status: ServiceStatus; localPort?: number }
  | { kind: 'judge'; name: string; judge: JudgeConfig; status: ServiceStatus; url: string }
  | { kind: 'hostError'; host: ResolvedHost; error: string }
  | MessageNode;

const ICONS: Record<ServiceStatus['state'], [string, string | undefined]> = {
  ready: ['pass-filled', 'testing.iconPassed'],
  starting: ['loading~spin', undefined],
  failed: ['error', 'testing.iconFailed'],
  stopped: ['circle-slash', undefined],
};

/**
 * The medrl.services view: model servers started as services on every host (state from their process and
 * /health + /v1/models through a port forward) and the judges of medrl.yaml. Polls while any is starting.
 */
export class ServicesTree implements vscode.TreeDataProvider<ServicesNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[];
  /** One forward per service (by run folder), kept while the window lives: the playground and the browser use them. */
  private readonly forwards = new Map<string, Promise<PortForward>>();
  private poll: NodeJS.Timeout | undefined;
  private last: ServicesNode[] = [];

  constructor(
    private readonly ctx: Ctx,
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
    private readonly keys: ServiceKeys,
  ) {
    this.disposables = [state.onDidChange(() => this.refresh())];
  }

  refresh(): void {
    this.changed.fire();
  }

  /** The services and judges as last shown (for commands that pick one). */
  get nodes(): ServicesNode[] {
    return this.last;
  }

  /** The local port that reaches a service (forwarded over its host's connection). */
  localPort(host: ResolvedHost, svc: Service): Promise<number> {
    return this.forward(svc.record.dir, host.name, () => this.pool.get(host.name).then((h) => forwardService(h, svc)));
  }

  private async forward(key: string, hostName: string, open: () => Promise<PortForward>): Promise<number> {
    let fwd = this.forwards.get(key);
    if (!fwd) {
      fwd = open();
      this.forwards.set(key, fwd);
      fwd.catch((err: unknown) => {
        this.forwards.delete(key);
        this.ctx.log.warn(`port forward on ${hostName}: ${errorMessage(err)}`);
      });
    }
    return (await fwd).localPort;
  }

  async closeForward(svc: Service): Promise<void> {
    const fwd = this.forwards.get(svc.record.dir);
    this.forwards.delete(svc.record.dir);
    if (fwd) await (await fwd).close();
  }

  async getChildren(element?: ServicesNode): Promise<ServicesNode[]> {
    if (element) return [];
    const gate = treeGate(this.state, 'welcome');
    if (gate) return gate;
    const nodes: ServicesNode[] = [];
    await Promise.all(
      workspaceHosts(this.state.config).map(async (h) => {
        try {
          const host = await this.pool.get(h.name);
          for (const svc of await listServices(host, h.runsDir)) {
            const key = await this.keys.get(svc);
            const first = await serviceStatus(host, svc, undefined, key);
            // Only services that run are forwarded; stopped and failed ones keep their last word (the log).
            if (first.state === 'starting') {
              const localPort = await this.localPort(h, svc);
              nodes.push({ kind: 'service', host: h, svc, status: await serviceStatus(host, svc, localPort, key), localPort });
            } else {
              await this.closeForward(svc);
              nodes.push({ kind: 'service', host: h, svc, status: first });
            }
          }
        } catch (err) {
          this.ctx.log.error(`services on ${h.name}: ${errorMessage(err)}`);
          nodes.push({ kind: 'hostError', host: h, error: errorMessage(err) });
        }
      }),
    );
    for (const [name, judge] of Object.entries(this.state.config?.judges ?? {})) nodes.push(await this.judgeNode(name, judge));
    // Stopped services are not shown (their run folders stay, `medrl services --all` lists them).
    this.last = nodes.filter((n) => n.kind !== 'service' || n.status.state !== 'stopped');
    const starting = this.last.some((n) => n.kind === 'service' && n.status.state === 'starting');
    clearTimeout(this.poll);
    if (starting) this.poll = setTimeout(() => this.refresh(), 1000);
    return this.last;
  }

  private async judgeNode(name: string, judge: JudgeConfig): Promise<ServicesNode> {
    const u = new URL(judge.url);
    let base = judge.url.replace(/\/v1\/?$/, '').replace(/\/+$/, '');
    try {
      if (judge.host && judge.host !== 'local') {
        // The judge's port on its host, reached over that host's connection.
        const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
        const localPort = await this.forward(`judge:${judge.host}:${u.hostname}:${port}`, judge.host, async () =>
          (await this.pool.get(judge.host!)).forwardPort(port, u.hostname),
        );
        base = `${u.protocol}//127.0.0.1:${localPort}${u.pathname.replace(/\/v1\/?$/, '').replace(/\/+$/, '')}`;
      }
      const p = await probeServer(base, 'vllm', undefined, 2000);
      const locked = !p.ready && /\/v1\/models: HTTP 401/.test(p.detail);
      return {
        kind: 'judge',
        name,
        judge,
        url: `${base}/v1`,
        status: {
          state: p.ready || locked ? 'ready' : 'failed',
          detail: locked ? 'answers; needs its API key' : p.detail,
          ...(p.models ? { models: p.models } : {}),
        },
      };
    } catch (err) {
      return { kind: 'judge', name, judge, url: judge.url, status: { state: 'failed', detail: errorMessage(err) } };
    }
  }

  getTreeItem(n: ServicesNode): vscode.TreeItem {
    switch (n.kind) {
      case 'message':
        return n.item;
      case 'hostError':
        return hostErrorItem(n.host, n.error);
      case 'judge':
        return judgeItem(n);
      case 'service':
        return serviceItem(n);
    }
  }

  dispose(): void {
    clearTimeout(this.poll);
    for (const f of this.forwards.values())
      void f.then(
        (x) => x.close(),
        () => undefined,
      );
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

function hostErrorItem(host: ResolvedHost, error: string): vscode.TreeItem {
  const item = new vscode.TreeItem(host.name);
  item.iconPath = new vscode.ThemeIcon('warning');
  item.description = error;
  return item;
}

function judgeItem(n: Extract<ServicesNode, { kind: 'judge' }>): vscode.TreeItem {
  const [, color] = ICONS[n.status.state];
  const item = new vscode.TreeItem(`${n.name} (judge)`);
  item.id = `judge:${n.name}`;
  item.iconPath = new vscode.ThemeIcon(n.status.state === 'ready' ? 'law' : 'error', color ? new vscode.ThemeColor(color) : undefined);
  item.description = `${n.status.state === 'ready' ? 'ready' : 'unreachable'} · ${n.judge.model} · ${n.judge.url}${n.judge.host ? ` on ${n.judge.host}` : ''}`;
  item.tooltip = `${n.judge.url}\n${n.status.detail ?? ''}`;
  item.contextValue = 'medrl.judge';
  return item;
}

function serviceItem(n: Extract<ServicesNode, { kind: 'service' }>): vscode.TreeItem {
  const s = n.svc;
  const [icon, color] = ICONS[n.status.state];
  const item = new vscode.TreeItem(s.name);
  item.id = `svc:${n.host.name}:${s.record.dir}`;
  item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
  const where = `${n.host.name}:${s.port}${n.localPort !== undefined && (n.host.kind !== 'local' || n.localPort !== s.port) ? ` → 127.0.0.1:${n.localPort}` : ''}`;
  item.description = [n.status.state, s.servedModelName, s.engine, where, n.status.standIn ? 'stand-in' : ''].filter(Boolean).join(' · ');
  const md = new vscode.MarkdownString(
    `**${s.name}** (${s.engine}) on \`${n.host.name}\`: ${n.status.state}\n\n- model: \`${s.model}\`\n- served as: \`${s.servedModelName}\`\n- port: ${s.port}\n- run folder: \`${s.record.dir}\`\n`,
  );
  if (n.status.detail) md.appendMarkdown(`- ${n.status.detail}\n`);
  if (n.status.logTail && n.status.state === 'failed') md.appendCodeblock(n.status.logTail.split('\n').slice(-15).join('\n'), 'log');
  item.tooltip = md;
  item.contextValue = `medrl.service.${n.status.state}`;
  return item;
}
