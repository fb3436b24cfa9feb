import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import './style.css';
import { connect, el } from '../shared/vscode-api';
import { PhiMaskBar } from '../shared/phi-mask-bar';
import { rowAndLine } from '../../src/core/format/row-line';
import { DatasetFromWebview, DatasetToWebview, type DatasetProblem, type DatasetRow } from '../../src/protocol/dataset';

/** Fixed row height of the table: only the rows in view are in the DOM, so a file of millions of rows scrolls like ten. */
const ROW_H = 66;
const PAGE = 100;
const MAX_COLUMNS = 6;

interface TextField extends HTMLElement {
  value: string;
}

const cache = new Map<number, DatasetRow>();
const requested = new Set<number>();
let total: number | undefined;
let columns: string[] = [];
let selected: number | undefined;
let searchId = 0;

const api = connect(DatasetToWebview, DatasetFromWebview, onMessage);

const app = document.getElementById('app')!;
const title = el('h1', { className: 'title' });
const meta = el('div', { className: 'meta' });
const status = el('div', { className: 'status' });
const phiMask = new PhiMaskBar((on) => api.post({ type: 'setPhiMask', on }));
const rowField = el('vscode-textfield') as unknown as TextField;
rowField.setAttribute('placeholder', 'row number');
rowField.className = 'goto';
const goButton = el('vscode-button', { text: 'Go to row' });
const searchField = el('vscode-textfield') as unknown as TextField;
searchField.setAttribute('placeholder', 'search text in every row');
searchField.className = 'search';
const searchButton = el('vscode-button', { text: 'Search' });
const cancelButton = el('vscode-button', { text: 'Cancel' });
cancelButton.setAttribute('secondary', '');
cancelButton.hidden = true;
const toolbar = el('div', { className: 'toolbar' }, rowField, goButton, searchField, searchButton, cancelButton);

const header = el('div', { className: 'table-header' });
const spacer = el('div', { className: 'spacer' });
const scroller = el('div', { className: 'scroller' }, spacer);
const table = el('div', { className: 'table' }, header, scroller);
const detail = el('div', { className: 'detail' }, el('p', { className: 'hint', text: 'Select a row to see all of it.' }));
const problemsList = el('ul', { className: 'problems' });
const problemsTitle = el('h2', { text: 'Problems' });
const searchList = el('ul', { className: 'matches' });
const searchTitle = el('h2', { text: 'Search' });
const lower = el('div', { className: 'lower' }, el('section', {}, problemsTitle, problemsList), el('section', {}, searchTitle, searchList));
app.append(el('header', {}, title, meta, status, phiMask.root), toolbar, el('div', { className: 'main' }, table, detail), lower);

scroller.addEventListener('scroll', () => render());
window.addEventListener('resize', () => render());
goButton.addEventListener('click', () => goToTyped());
rowField.addEventListener('keydown', (e) => {
  if ((e as KeyboardEvent).key === 'Enter') goToTyped();
});
searchButton.addEventListener('click', () => startSearch());
searchField.addEventListener('keydown', (e) => {
  if ((e as KeyboardEvent).key === 'Enter') startSearch();
});
cancelButton.addEventListener('click', () => {
  api.post({ type: 'cancelSearch', id: searchId });
  cancelButton.hidden = true;
  searchTitle.textContent = `${searchTitle.textContent ?? ''} (cancelled)`;
});

function onMessage(msg: DatasetToWebview): void {
  switch (msg.type) {
    case 'open':
      title.textContent = msg.title;
      title.title = `${msg.host}:${msg.path}`;
      meta.textContent = `${msg.format} · ${msg.sizeLabel}${msg.rowCount !== undefined ? ` · ${msg.rowCount} rows` : ''}`;
      if (msg.rowCount !== undefined) total = msg.rowCount;
      if (msg.columns.length) setColumns(msg.columns);
      status.textContent = 'checking rows…';
      render();
      return;
    case 'rows': {
      for (const r of msg.rows) cache.set(r.index, r);
      if (msg.end) total = msg.start + msg.rows.length;
      if (!columns.length) setColumns(columnsOf(msg.rows));
      render();
      if (selected !== undefined && cache.has(selected)) showDetail(selected);
      return;
    }
    case 'progress':
      status.textContent = `checking rows… ${msg.rows} read`;
      return;
    case 'summary': {
      total = msg.rows;
      meta.textContent = `${meta.textContent?.split(' · ').slice(0, 2).join(' · ')} · ${msg.kindLabel} · ${msg.rows} rows`;
      const breakdown = Object.entries(msg.dataSources)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      status.textContent = `${msg.rowsOk} of ${msg.rows} rows fine, ${msg.problemCount} problem(s)${breakdown ? ` · data_source: ${breakdown}` : ''} · prompt budget ${msg.maxPromptTokens} tokens (≈ characters / 4)`;
      status.classList.toggle('bad', msg.problemCount > 0);
      if (msg.columns.length && !columns.length) setColumns(msg.columns);
      showProblems(msg.problems, msg.problemCount);
      render();
      return;
    }
    case 'goTo':
      goTo(msg.row);
      return;
    case 'searchResults':
      if (msg.id !== searchId) return;
      for (const m of msg.matches) {
        const li = el('li', {}, el('span', { className: 'at', text: rowAndLine({ row: m.index }) }), el('span', { text: m.snippet }));
        li.addEventListener('click', () => goTo(m.index));
        searchList.append(li);
      }
      if (msg.done) {
        cancelButton.hidden = true;
        searchTitle.textContent = `Search: ${searchList.childElementCount} matching row(s)`;
      } else searchTitle.textContent = `Search: ${searchList.childElementCount} matching row(s) in ${msg.scanned} rows read…`;
      return;
    case 'error':
      status.textContent = msg.message;
      status.classList.add('bad');
      return;
    case 'phiMask':
      if (phiMask.set(msg.on)) reloadShown();
      return;
  }
}

/** Masking turned on or off: the rows are asked for again (they come masked or not); a search's matches would have to be found again. */
function reloadShown(): void {
  cache.clear();
  requested.clear();
  if (!cancelButton.hidden) api.post({ type: 'cancelSearch', id: searchId });
  searchId++;
  cancelButton.hidden = true;
  searchList.replaceChildren();
  searchTitle.textContent = 'Search';
  if (selected !== undefined) detail.replaceChildren(el('p', { className: 'hint', text: `reading row ${selected}…` }));
  render();
}

function columnsOf(rows: DatasetRow[]): string[] {
  const keys = new Set<string>();
  for (const r of rows)
    if (r.value && typeof r.value === 'object' && !Array.isArray(r.value)) for (const k of Object.keys(r.value)) keys.add(k);
  return [...keys];
}

function setColumns(cols: string[]): void {
  columns = cols.slice(0, MAX_COLUMNS);
  header.replaceChildren(
    el('div', { className: 'cell index', text: '#' }),
    ...columns.map((c) => el('div', { className: 'cell', text: c, title: c })),
  );
  header.style.gridTemplateColumns = gridColumns();
}

function gridColumns(): string {
  return `5em repeat(${Math.max(1, columns.length)}, minmax(8em, 1fr))`;
}

/** One line of text for a cell: strings as they are, chat messages as "role: content", other values as compact JSON. */
function cellText(v: unknown): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((m) => typeof m === 'object' && m !== null && 'content' in m)) {
    return v.map((m) => `${String((m as { role?: unknown }).role ?? '')}: ${String((m as { content: unknown }).content)}`).join('\n');
  }
  return JSON.stringify(v);
}

function knownRows(): number {
  if (total !== undefined) return total;
  let max = -1;
  for (const k of cache.keys()) max = Math.max(max, k);
  return max + 1 + PAGE; // room to scroll on, until the end of the file is known
}

function render(): void {
  const n = knownRows();
  spacer.style.height = `${n * ROW_H}px`;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_H) - 5);
  const last = Math.min(n - 1, Math.ceil((scroller.scrollTop + scroller.clientHeight) / ROW_H) + 5);
  const nodes: HTMLElement[] = [spacer];
  for (let i = first; i <= last; i++) {
    const r = cache.get(i);
    if (!r) request(i);
    const row = el('div', { className: `dataset-row${r?.error ? ' error' : ''}${i === selected ? ' selected' : ''}` });
    row.style.top = `${i * ROW_H}px`;
    row.style.height = `${ROW_H}px`;
    row.style.gridTemplateColumns = gridColumns();
    row.dataset.index = String(i);
    row.append(el('div', { className: 'cell index', text: String(i + 1), title: r?.line !== undefined ? `line ${r.line}` : '' }));
    if (!r) row.append(el('div', { className: 'cell pending', text: '…' }));
    else if (r.error !== undefined) row.append(el('div', { className: 'cell wide', text: r.error, title: r.error }));
    else {
      const obj =
        r.value && typeof r.value === 'object' && !Array.isArray(r.value) ? (r.value as Record<string, unknown>) : { value: r.value };
      for (const c of columns) {
        const t = cellText(obj[c]);
        row.append(el('div', { className: 'cell', text: t, title: t.slice(0, 2000) }));
      }
    }
    row.addEventListener('click', () => select(i));
    nodes.push(row);
  }
  scroller.replaceChildren(...nodes);
}

function request(i: number): void {
  const page = Math.floor(i / PAGE);
  if (requested.has(page)) return;
  requested.add(page);
  api.post({ type: 'getRows', start: page * PAGE, count: PAGE });
}

function select(i: number): void {
  selected = i;
  render();
  showDetail(i);
}

function goTo(i: number): void {
  if (total !== undefined && i >= total) {
    status.textContent = `row ${i} is past the end: the file has ${total} rows (0 to ${total - 1})`;
    return;
  }
  selected = i;
  scroller.scrollTop = Math.max(0, i * ROW_H - ROW_H * 2);
  render();
  if (cache.has(i)) showDetail(i);
  else detail.replaceChildren(el('p', { className: 'hint', text: `reading row ${i}…` }));
}

function goToTyped(): void {
  const n = Number(rowField.value.trim());
  // Rows are counted from 1 here as everywhere a person reads them; the index kept is 0-based.
  if (!Number.isInteger(n) || n < 1) {
    status.textContent = `"${rowField.value}" is not a row number (rows are counted from 1)`;
    return;
  }
  goTo(n - 1);
}

function startSearch(): void {
  const q = searchField.value.trim();
  if (!q) return;
  searchId++;
  searchList.replaceChildren();
  searchTitle.textContent = `Search: "${q}"…`;
  cancelButton.hidden = false;
  api.post({ type: 'search', id: searchId, query: q });
}

function showDetail(i: number): void {
  const r = cache.get(i);
  if (!r) return;
  const head = el('h2', {
    text: `Row ${i + 1}${r.key !== undefined ? ` · ${r.key}` : ''}${r.line !== undefined ? ` · line ${r.line}` : ''}`,
  });
  detail.replaceChildren(head, r.error !== undefined ? el('div', { className: 'text error', text: r.error }) : valueView(r.value, 0));
}

/** A value as an expandable tree: objects and lists open to two levels, long text wrapped. */
function valueView(v: unknown, depth: number): HTMLElement {
  if (typeof v === 'string') return el('div', { className: 'text', text: v });
  if (v === null || typeof v !== 'object') return el('span', { className: 'scalar', text: JSON.stringify(v) ?? 'undefined' });
  const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
  const box = el('details', { className: 'node' });
  box.open = depth < 3;
  box.append(el('summary', { text: Array.isArray(v) ? `list of ${entries.length}` : `${entries.length} field(s)` }));
  for (const [k, x] of entries)
    box.append(el('div', { className: 'entry' }, el('span', { className: 'key', text: k }), valueView(x, depth + 1)));
  return box;
}

function showProblems(problems: DatasetProblem[], count: number): void {
  problemsTitle.textContent = count
    ? `Problems: ${count}${count > problems.length ? ` (first ${problems.length} shown)` : ''}`
    : 'Problems: none';
  problemsList.replaceChildren(
    ...problems.map((p) => {
      const where = [rowAndLine(p) || 'file', p.field].filter(Boolean).join(' · ');
      const li = el(
        'li',
        { className: `problem ${p.severity}` },
        el('span', { className: 'at', text: where }),
        el('span', { text: p.reason }),
      );
      if (p.row !== undefined) li.addEventListener('click', () => goTo(p.row!));
      return li;
    }),
  );
}

api.post({ type: 'ready' });
