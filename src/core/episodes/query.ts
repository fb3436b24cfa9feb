import { FLAG_EMPTY, FLAG_NO_EOS, FLAG_UNCLOSED, type EpisodeTable } from './episode-table';
import type { ExtraValue } from './episode';

/** What the episode list is filtered by. Every field is optional; all given ones must hold. */
export interface EpisodeFilter {
  /** Rows that matched a text search (computed by `EpisodeFile.search`). */
  textHits?: Uint8Array;
  minScore?: number;
  maxScore?: number;
  dataSource?: string;
  /** `key` present with this value (compared as text; `*` = present at all). */
  extra?: { key: string; value: string };
  /** Only responses that look empty or cut off. */
  flagged?: boolean;
}

/** Built-in sortable columns; any extra key sorts too (`extra:KEY`). */
type SortColumn = 'index' | 'score' | 'length' | 'dataSource' | 'advantage' | 'group' | `extra:${string}`;

export interface EpisodeSort {
  column: SortColumn;
  desc: boolean;
}

export function filterRows(t: EpisodeTable, f: EpisodeFilter): Int32Array {
  const out = new Int32Array(t.length);
  let n = 0;
  const ds = f.dataSource === undefined ? undefined : t.lookup(f.dataSource);
  for (let i = 0; i < t.length; i++) {
    if (f.textHits && !f.textHits[i]) continue;
    const s = t.score[i]!;
    if (f.minScore !== undefined && !(s >= f.minScore)) continue;
    if (f.maxScore !== undefined && !(s <= f.maxScore)) continue;
    if (ds !== undefined && t.dataSource[i] !== ds) continue;
    if (f.flagged && !(t.flags[i]! & (FLAG_EMPTY | FLAG_UNCLOSED | FLAG_NO_EOS))) continue;
    if (f.extra) {
      const v = t.extra(f.extra.key, i);
      if (v === undefined) continue;
      if (f.extra.value !== '*' && String(v) !== f.extra.value) continue;
    }
    out[n++] = i;
  }
  return out.slice(0, n);
}

function sortKey(t: EpisodeTable, column: SortColumn): (i: number) => number | string | undefined {
  switch (column) {
    case 'index':
      return (i) => i;
    case 'score':
      return (i) => (Number.isNaN(t.score[i]!) ? undefined : t.score[i]);
    case 'length':
      return (i) => t.responseLength[i];
    case 'dataSource':
      return (i) => t.str(t.dataSource[i]!);
    case 'advantage':
      return (i) => {
        const a = t.advantageOf(i);
        return Number.isNaN(a) ? undefined : a;
      };
    case 'group':
      return (i) => t.group[i];
    default: {
      const key = column.slice('extra:'.length);
      return (i) => {
        const v: ExtraValue | undefined = t.extra(key, i);
        return v === undefined || v === null ? undefined : typeof v === 'boolean' ? Number(v) : v;
      };
    }
  }
}

/** Sorts rows in place by a column; missing values go last in either direction, ties keep file order. */
export function sortRows(t: EpisodeTable, rows: Int32Array, sort: EpisodeSort): Int32Array {
  if (sort.column === 'index' && !sort.desc) return rows;
  const key = sortKey(t, sort.column);
  const keys = new Map<number, number | string | undefined>();
  for (const i of rows) keys.set(i, key(i));
  const dir = sort.desc ? -1 : 1;
  return rows.sort((a, b) => {
    const ka = keys.get(a);
    const kb = keys.get(b);
    if (ka === undefined || kb === undefined) return ka === kb ? a - b : ka === undefined ? 1 : -1;
    if (ka === kb) return a - b;
    if (typeof ka === 'number' && typeof kb === 'number') return (ka - kb) * dir;
    return String(ka).localeCompare(String(kb)) * dir;
  });
}
