import { realpath } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
import type {
  DirEntry,
  ExecOptions,
  ExecResult,
  FileStat,
  Host,
  HostStats,
  PortForward,
  ReadRange,
  SpawnedProcess,
} from '../../core/remote/host';

/**
 * The local host of an untrusted workspace: it runs nothing and reads or writes only inside the workspace folders,
 * links followed (a dataset root, run folder or symlink the repository points at ~/.ssh is refused). Everything that
 * reaches the local host in Restricted Mode goes through it, so no feature can forget the check.
 */
export class WorkspaceConfinedHost implements Host {
  readonly kind = 'local' as const;
  readonly name: string;

  constructor(
    private readonly inner: Host,
    private readonly roots: () => string[],
    private readonly refuse: (what: string) => Error,
  ) {
    this.name = inner.name;
  }

  /** The real path of `path` (or of its nearest existing parent, for a file to create), refused outside every root. */
  private async inside(path: string): Promise<string> {
    const abs = await this.inner.resolvePath(path);
    let real: string | undefined;
    for (let p = abs; real === undefined; p = dirname(p)) {
      try {
        real = await realpath(p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(p) === p) throw err;
      }
    }
    const roots = await Promise.all(this.roots().map((r) => realpath(r).catch(() => r)));
    if (!roots.some((r) => real === r || real!.startsWith(r.endsWith(sep) ? r : r + sep)))
      throw this.refuse(`Reading ${abs}${real === abs ? '' : ` (a link to ${real})`}, outside the workspace,`);
    return abs;
  }

  exec(_script: string, _opts?: ExecOptions): Promise<ExecResult> {
    return Promise.reject(this.refuse('Running commands'));
  }

  spawn(_script: string, _opts?: Omit<ExecOptions, 'stdin' | 'timeoutMs'>): Promise<SpawnedProcess> {
    return Promise.reject(this.refuse('Running commands'));
  }

  async readFile(path: string, range?: ReadRange): Promise<Buffer> {
    return this.inner.readFile(await this.inside(path), range);
  }

  async *readChunks(path: string, opts?: { start?: number; end?: number; signal?: AbortSignal }): AsyncIterable<Buffer> {
    yield* this.inner.readChunks(await this.inside(path), opts);
  }

  async writeFile(path: string, data: string | Uint8Array, opts?: { mode?: number }): Promise<void> {
    return this.inner.writeFile(await this.inside(path), data, opts);
  }

  async stat(path: string): Promise<FileStat> {
    return this.inner.stat(await this.inside(path));
  }

  async readdir(path: string): Promise<DirEntry[]> {
    return this.inner.readdir(await this.inside(path));
  }

  async mkdir(path: string): Promise<void> {
    return this.inner.mkdir(await this.inside(path));
  }

  async remove(path: string): Promise<void> {
    return this.inner.remove(await this.inside(path));
  }

  resolvePath(path: string): Promise<string> {
    return this.inner.resolvePath(path);
  }

  forwardPort(_remotePort: number, _remoteHost?: string): Promise<PortForward> {
    return Promise.reject(this.refuse('Forwarding ports'));
  }

  stats(): HostStats {
    return this.inner.stats();
  }

  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}
