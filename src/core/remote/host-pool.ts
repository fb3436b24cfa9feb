import { findHost, LOCAL_HOST, type ResolvedHost } from '../config/workspace-config';
import type { Host } from './host';
import { LocalHost } from './local-host';
import type { SshContext } from './ssh-connect';
import { SshHost } from './ssh-host';

/** Makes the Host for an SSH host entry; the hosts layer (ssh2, ~/.ssh/config, known_hosts) provides it. */
type SshHostFactory = (host: ResolvedHost) => Promise<Host>;

/** SSH hosts for the pool: each an SshHost on the alias, sharing one context (files, prompter, secrets of the session). */
export function sshHostFactory(ctx: SshContext): SshHostFactory {
  return async (host) => new SshHost(host.name, host.sshAlias ?? host.name, ctx);
}

/**
 * One Host per host name, shared by every feature (runs, checkpoints, datasets, episodes, services, reward workers),
 * so each host has one connection. The local host is built in; SSH hosts come from the factory.
 */
export class HostPool {
  private readonly hosts = new Map<string, Promise<Host>>();

  constructor(
    /** The hosts as they are now (medrl.yaml may change while the pool lives). */
    private readonly entries: () => ResolvedHost[],
    private readonly sshFactory?: SshHostFactory,
  ) {}

  get(name: string): Promise<Host> {
    let host = this.hosts.get(name);
    if (!host) {
      host = this.create(name);
      this.hosts.set(name, host);
      // A failed connection is not cached: the next call tries again.
      host.catch(() => this.hosts.delete(name));
    }
    return host;
  }

  private async create(name: string): Promise<Host> {
    const entry = findHost(this.entries(), name);
    if (entry.kind === 'local' || name === LOCAL_HOST) return new LocalHost(name);
    if (!this.sshFactory) throw new Error(`host "${name}": SSH hosts are not available in this context`);
    return this.sshFactory(entry);
  }

  /** Drops a host (e.g. after its entry changed); its connection is closed. */
  async forget(name: string): Promise<void> {
    const host = this.hosts.get(name);
    this.hosts.delete(name);
    if (host) await (await host.catch(() => undefined))?.dispose();
  }

  async dispose(): Promise<void> {
    const all = [...this.hosts.keys()];
    await Promise.all(all.map((n) => this.forget(n)));
  }
}
