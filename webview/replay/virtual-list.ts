import { el } from '../shared/vscode-api';
import type { EpisodeRowMsg } from '../../src/protocol/replay';
import { fmtScore, fmtSigned, signOf } from './format';

const ROW_HEIGHT = 24;
const BLOCK = 100;

interface Column {
  id: string;
  label: string;
  width: string;
  cell(r: EpisodeRowMsg): string;
  title?: string;
}

export function columnsFor(extraKeys: string[]): Column[] {
  return [
    { id: 'index', label: '#', width: '52px', cell: (r) => String(r.index) },
    { id: 'score', label: 'score', width: '64px', cell: (r) => fmtScore(r.score) },
    {
      id: 'advantage',
      label: 'adv',
      width: '70px',
      cell: (r) => `${signOf(r.advantage)} ${fmtSigned(r.advantage)}`,
      title: 'score minus the group mean (GRPO), or the advantage TRL logged',
    },
    { id: 'group', label: 'group', width: '56px', cell: (r) => `${r.group} (${r.groupSize})` },
    { id: 'length', label: 'len', width: '64px', cell: (r) => String(r.length), title: 'response length in characters' },
    { id: 'dataSource', label: 'data_source', width: 'minmax(90px, 1fr)', cell: (r) => r.dataSource ?? '' },
    { id: 'flags', label: 'flags', width: 'minmax(60px, 1fr)', cell: (r) => r.flags.join(', ') },
    ...extraKeys.map((k) => ({
      id: `extra:${k}`,
      label: k,
      width: 'minmax(60px, 1fr)',
      cell: (r: EpisodeRowMsg) => (r.extra[k] === undefined ? '' : String(r.extra[k])),
    })),
  ];
}

/**
 * A list that only has DOM for the rows in view and only asks the extension for the blocks of rows it shows, so a step
 * with a million episodes scrolls like one with ten.
 */
export class VirtualList {
  readonly root = el('div', { className: 'vlist' });
  private readonly header = el('div', { className: 'vlist-header' });
  private readonly viewport = el('div', { className: 'vlist-viewport' });
  private readonly spacer = el('div', { className: 'vlist-spacer' });
  private blocks = new Map<number, EpisodeRowMsg[] | 'pending'>();
  private total = 0;
  private columns: Column[] = columnsFor([]);
  selected: number | undefined;

  constructor(
    private readonly fetchBlock: (offset: number, count: number) => void,
    private readonly onOpen: (index: number) => void,
    private readonly onSort: (column: string) => void,
  ) {
    this.viewport.tabIndex = 0;
    this.viewport.setAttribute('role', 'listbox');
    this.viewport.setAttribute('aria-label', 'Episodes');
    this.viewport.append(this.spacer);
    this.root.append(this.header, this.viewport);
    this.viewport.addEventListener('scroll', () => this.render());
    this.viewport.addEventListener('keydown', (e) => this.key(e));
    new ResizeObserver(() => this.render()).observe(this.viewport);
  }

  setColumns(columns: Column[], sort: { column: string; desc: boolean }): void {
    this.columns = columns;
    this.header.replaceChildren(
      ...columns.map((c) => {
        const arrow = sort.column === c.id ? (sort.desc ? ' ▼' : ' ▲') : '';
        const h = el('button', { className: 'vlist-hcell', text: c.label + arrow, title: c.title ?? `sort by ${c.label}` });
        if (c.id !== 'flags') h.addEventListener('click', () => this.onSort(c.id));
        else h.disabled = true;
        return h;
      }),
    );
    this.header.style.gridTemplateColumns = this.template();
    this.render();
  }

  private template(): string {
    return this.columns.map((c) => c.width).join(' ');
  }

  /** No rows known yet (so scrolling cannot ask for any). */
  isEmpty(): boolean {
    return this.total === 0;
  }

  /** A new query: forget every block. */
  reset(total: number): void {
    this.blocks.clear();
    this.total = total;
    this.viewport.scrollTop = 0;
  }

  /** The same query over more rows (the index grew): reload what is in view, keep the scroll position. */
  refresh(): void {
    this.blocks.clear();
    this.render();
  }

  setBlock(offset: number, rows: EpisodeRowMsg[], total: number): void {
    this.total = total;
    this.blocks.set(Math.floor(offset / BLOCK), rows);
    this.render();
  }

  /** Positions in the current order of the rows that are loaded. */
  private rowAt(pos: number): EpisodeRowMsg | undefined {
    const b = this.blocks.get(Math.floor(pos / BLOCK));
    return Array.isArray(b) ? b[pos % BLOCK] : undefined;
  }

  positionOf(index: number): number | undefined {
    for (const [k, b] of this.blocks) {
      if (!Array.isArray(b)) continue;
      const j = b.findIndex((r) => r.index === index);
      if (j !== -1) return k * BLOCK + j;
    }
    return undefined;
  }

  render(): void {
    this.spacer.style.height = `${this.total * ROW_HEIGHT}px`;
    const top = this.viewport.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 5);
    const last = Math.min(this.total, Math.ceil((top + this.viewport.clientHeight) / ROW_HEIGHT) + 5);
    for (let b = Math.floor(first / BLOCK); b <= Math.floor(Math.max(first, last - 1) / BLOCK) && b * BLOCK < this.total; b++) {
      if (!this.blocks.has(b)) {
        this.blocks.set(b, 'pending');
        this.fetchBlock(b * BLOCK, BLOCK);
      }
    }
    const rows: HTMLElement[] = [];
    const template = this.template();
    for (let pos = first; pos < last; pos++) {
      const r = this.rowAt(pos);
      const row = el('div', { className: 'vlist-row' });
      row.style.top = `${pos * ROW_HEIGHT}px`;
      row.style.gridTemplateColumns = template;
      row.setAttribute('role', 'option');
      if (r) {
        row.dataset.index = String(r.index);
        if (r.index === this.selected) row.classList.add('selected');
        if (r.score !== null) row.classList.add(r.score > 0 ? 'pos' : 'zero');
        if (r.flags.length) row.classList.add('flagged');
        for (const c of this.columns)
          row.append(el('span', { className: `vlist-cell col-${c.id.replace(/[^a-z]/gi, '')}`, text: c.cell(r), title: c.cell(r) }));
        row.addEventListener('click', () => this.open(r.index));
      } else {
        row.append(el('span', { className: 'vlist-cell muted', text: 'loading…' }));
      }
      rows.push(row);
    }
    this.viewport.replaceChildren(this.spacer, ...rows);
  }

  open(index: number): void {
    this.selected = index;
    this.render();
    this.onOpen(index);
  }

  private key(e: KeyboardEvent): void {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const pos = this.selected === undefined ? -1 : (this.positionOf(this.selected) ?? -1);
    const next = Math.max(0, Math.min(this.total - 1, pos + (e.key === 'ArrowDown' ? 1 : -1)));
    const r = this.rowAt(next);
    if (!r) return;
    const y = next * ROW_HEIGHT;
    if (y < this.viewport.scrollTop) this.viewport.scrollTop = y;
    else if (y + ROW_HEIGHT > this.viewport.scrollTop + this.viewport.clientHeight)
      this.viewport.scrollTop = y + ROW_HEIGHT - this.viewport.clientHeight;
    this.open(r.index);
  }
}
