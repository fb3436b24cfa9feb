import type { FileStat } from '../remote/host';
import type { PhiCounts } from './phi-categories';

/**
 * What is kept of a dataset's scan: the counts per category and the file's size and mtime when scanned. Never the text
 * found nor where it is: the store is the workspace's state on disk.
 */
export interface ScanCounts {
  size: number;
  mtimeMs: number;
  /** Epoch ms. */
  scannedAt: number;
  rows: number;
  unreadable: number;
  counts: PhiCounts;
}

/** The part of VS Code's Memento the store uses (workspaceState), so the store runs in unit tests too. */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

const KEY = 'medrl.phi.scanCounts';

/** Scan counts per dataset (key: host:path), valid while the file keeps the size and mtime it had when scanned. */
export class ScanCountsStore {
  constructor(private readonly store: KeyValueStore) {}

  private all(): Record<string, ScanCounts> {
    return this.store.get<Record<string, ScanCounts>>(KEY) ?? {};
  }

  /** The counts of the file as it is now (`stat`); counts of an older version are dropped. */
  async get(key: string, stat: Pick<FileStat, 'size' | 'mtimeMs'>): Promise<ScanCounts | undefined> {
    const all = this.all();
    if (!all[key]) return undefined;
    const s = this.peek(key, stat);
    if (s) return s;
    delete all[key];
    await this.store.update(KEY, all);
    return undefined;
  }

  /** The counts of the file as `stat` says it is, without writing (a tree item's tooltip, built synchronously). */
  peek(key: string, stat: Pick<FileStat, 'size' | 'mtimeMs'>): ScanCounts | undefined {
    const s = this.all()[key];
    return s && s.size === stat.size && s.mtimeMs === stat.mtimeMs ? s : undefined;
  }

  async set(key: string, counts: ScanCounts): Promise<void> {
    // Only the fields above are written, whatever else the caller's object holds.
    const { size, mtimeMs, scannedAt, rows, unreadable } = counts;
    await this.store.update(KEY, { ...this.all(), [key]: { size, mtimeMs, scannedAt, rows, unreadable, counts: { ...counts.counts } } });
  }
}
