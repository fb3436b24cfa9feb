import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '../shared/page.css';
import './replay.css';
import { connect, el } from '../shared/vscode-api';
import { PhiMaskBar } from '../shared/phi-mask-bar';
import { fromWebview, toWebview, type EpisodeQueryMsg, type StepInfoMsg, type ToWebview } from '../../src/protocol/replay';
import { VirtualList, columnsFor } from './virtual-list';
import { EpisodeView } from './episode-view';
import { Timeline, signalsPanel } from './timeline';

interface State {
  collection: string;
  step: number | undefined;
  sort: EpisodeQueryMsg['sort'];
  filters: { text: string; minScore: string; maxScore: string; dataSource: string; extraKey: string; extraValue: string; flagged: boolean };
}

const api = connect(toWebview, fromWebview, onMessage);
const saved = api.getState<State>();
const state: State = saved ?? {
  collection: '',
  step: undefined,
  sort: { column: 'index', desc: false },
  filters: { text: '', minScore: '', maxScore: '', dataSource: '', extraKey: '', extraValue: '', flagged: false },
};
let steps: StepInfoMsg[] = [];
let requestId = 0;
let queryGen = 0;
/** requestId → the query generation it belongs to (stale pages are dropped). */
const pending = new Map<number, number>();
let extraKeys: string[] = [];
let dataSources: string[] = [];
let openIndex: number | undefined;

const app = document.getElementById('app')!;
const title = el('div', { className: 'title' });
const status = el('span', { className: 'status muted', text: 'opening…' });
status.setAttribute('role', 'status');
const collectionSelect = document.createElement('vscode-single-select');
collectionSelect.id = 'collection';
collectionSelect.setAttribute('aria-label', 'Episode set');
const phiMask = new PhiMaskBar((on) => api.post({ type: 'setPhiMask', on }));
const timeline = new Timeline((step) => pickStep(step));
const signalsBox = el('div', { className: 'signals-box' });

function field(id: string, placeholder: string, key: keyof State['filters'], width = ''): HTMLElement {
  const f = document.createElement('vscode-textfield');
  f.id = id;
  f.setAttribute('placeholder', placeholder);
  f.setAttribute('aria-label', placeholder);
  if (width) f.style.width = width;
  (f as unknown as { value: string }).value = String(state.filters[key]);
  let timer: number | undefined;
  f.addEventListener('input', () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      (state.filters as Record<string, unknown>)[key] = (f as unknown as { value: string }).value;
      requery();
    }, 250);
  });
  return f;
}

function select(id: string, label: string, key: 'dataSource' | 'extraKey'): HTMLElement {
  const s = document.createElement('vscode-single-select');
  s.id = id;
  s.setAttribute('aria-label', label);
  s.addEventListener('change', () => {
    state.filters[key] = (s as unknown as { value: string }).value;
    requery();
  });
  return s;
}

function setOptions(s: HTMLElement, values: string[], current: string, anyLabel: string): void {
  s.replaceChildren(
    ...['', ...values].map((v) => {
      const o = document.createElement('vscode-option');
      o.setAttribute('value', v);
      o.textContent = v || anyLabel;
      if (v === current) o.setAttribute('selected', '');
      return o;
    }),
  );
  (s as unknown as { value: string }).value = current;
}

const textField = field('filter-text', 'search prompt and response', 'text', '220px');
const minField = field('filter-min', 'min score', 'minScore', '80px');
const maxField = field('filter-max', 'max score', 'maxScore', '80px');
const dsSelect = select('filter-ds', 'data_source', 'dataSource');
const extraSelect = select('filter-extra-key', 'extra key', 'extraKey');
const extraValue = field('filter-extra-value', 'value (empty: any)', 'extraValue', '120px');
const flagged = document.createElement('vscode-checkbox');
flagged.id = 'filter-flagged';
flagged.setAttribute('label', 'empty or cut off');
if (state.filters.flagged) flagged.setAttribute('checked', '');
flagged.addEventListener('change', () => {
  state.filters.flagged = (flagged as unknown as { checked: boolean }).checked;
  requery();
});
const sendFiltered = document.createElement('vscode-button');
sendFiltered.id = 'send-filtered';
sendFiltered.textContent = 'Send filtered to playground';
sendFiltered.setAttribute('secondary', '');
sendFiltered.addEventListener('click', () => {
  if (state.step !== undefined) api.post({ type: 'sendToPlayground', collection: state.collection, step: state.step });
});
const count = el('span', { className: 'count muted' });
count.setAttribute('role', 'status');

const list = new VirtualList(
  (offset, n) => fetchPage(offset, n),
  (index) => openEpisode(index),
  (column) => {
    state.sort =
      state.sort.column === column
        ? { column: state.sort.column, desc: !state.sort.desc }
        : { column: column as EpisodeQueryMsg['sort']['column'], desc: column !== 'index' };
    requery();
  },
);
const episodeView = new EpisodeView({
  openIndex: (i) => list.open(i),
  compare: () => {
    if (state.step !== undefined && openIndex !== undefined)
      api.post({ type: 'compare', collection: state.collection, step: state.step, index: openIndex });
  },
  sendToPlayground: () => {
    if (state.step !== undefined && openIndex !== undefined)
      api.post({ type: 'sendToPlayground', collection: state.collection, step: state.step, index: openIndex });
  },
});

app.append(
  el('header', { className: 'top' }, title, collectionSelect, status, phiMask.root),
  timeline.root,
  signalsBox,
  el('div', { className: 'filters' }, textField, minField, maxField, dsSelect, extraSelect, extraValue, flagged, count, sendFiltered),
  el('main', { className: 'panes' }, list.root, episodeView.root),
);

collectionSelect.addEventListener('change', () => {
  state.collection = (collectionSelect as unknown as { value: string }).value;
  const inSet = steps.filter((s) => s.collection === state.collection);
  pickStep(inSet.at(-1)?.step);
});

function num(s: string): number | undefined {
  if (!s.trim()) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function query(offset: number, n: number): EpisodeQueryMsg | undefined {
  if (state.step === undefined) return undefined;
  const f = state.filters;
  return {
    collection: state.collection,
    step: state.step,
    ...(f.text.trim() ? { text: f.text.trim() } : {}),
    ...(num(f.minScore) !== undefined ? { minScore: num(f.minScore) } : {}),
    ...(num(f.maxScore) !== undefined ? { maxScore: num(f.maxScore) } : {}),
    ...(f.dataSource ? { dataSource: f.dataSource } : {}),
    ...(f.extraKey ? { extraKey: f.extraKey, extraValue: f.extraValue } : {}),
    ...(f.flagged ? { flagged: true } : {}),
    sort: state.sort,
    offset,
    count: n,
  };
}

function fetchPage(offset: number, n: number): void {
  const q = query(offset, n);
  if (!q) return;
  const id = ++requestId;
  pending.set(id, queryGen);
  api.post({ type: 'query', requestId: id, query: q });
}

let lastRefresh = 0;
/** The open step's index grew: reload the rows in view (at most once a second). */
function refreshList(): void {
  if (Date.now() - lastRefresh < 1000) return;
  lastRefresh = Date.now();
  queryGen++;
  list.refresh();
  if (list.isEmpty()) fetchPage(0, 100);
}

/** A new filter, sort or step: the list starts over. */
function requery(): void {
  api.setState(state);
  queryGen++;
  list.reset(0);
  fetchPage(0, 100);
}

function pickStep(step: number | undefined, episode = 0): void {
  state.step = step;
  openIndex = undefined;
  list.selected = undefined;
  timeline.update(
    steps.filter((s) => s.collection === state.collection),
    step,
  );
  signalsBox.replaceChildren(signalsPanel(steps.find((s) => s.collection === state.collection && s.step === step)));
  requery();
  // The first episode is shown at once, before the step's index is complete.
  if (step !== undefined) openEpisode(episode);
}

function openEpisode(index: number): void {
  if (state.step === undefined) return;
  openIndex = index;
  api.post({ type: 'open', collection: state.collection, step: state.step, index });
}

function onMessage(msg: ToWebview): void {
  switch (msg.type) {
    case 'init': {
      steps = msg.steps;
      title.textContent = msg.title;
      title.title = msg.source;
      const names = [...new Set(steps.map((s) => s.collection))];
      if (!names.includes(state.collection)) state.collection = names[0] ?? '';
      const focus = msg.focus && steps.find((s) => s.collection === msg.focus!.collection && s.step === msg.focus!.step);
      if (focus) state.collection = focus.collection;
      collectionSelect.replaceChildren(
        ...names.map((n) => {
          const o = document.createElement('vscode-option');
          o.setAttribute('value', n);
          o.textContent = n;
          if (n === state.collection) o.setAttribute('selected', '');
          return o;
        }),
      );
      const inSet = steps.filter((s) => s.collection === state.collection);
      if (focus) {
        pickStep(focus.step, msg.focus!.index);
        list.selected = msg.focus!.index;
      } else pickStep(inSet.some((s) => s.step === state.step) ? state.step : inSet.at(-1)?.step);
      break;
    }
    case 'steps': {
      const before = steps.find((s) => s.collection === state.collection && s.step === state.step);
      steps = msg.steps;
      const now = steps.find((s) => s.collection === state.collection && s.step === state.step);
      timeline.update(
        steps.filter((s) => s.collection === state.collection),
        state.step,
      );
      signalsBox.replaceChildren(signalsPanel(now));
      status.textContent = `${steps.filter((s) => s.indexed).length}/${steps.length} step files indexed`;
      // The open step finished indexing: refresh the list (its length, groups and signals are final now).
      if (now?.indexed && !before?.indexed) requery();
      break;
    }
    case 'progress':
      if (msg.collection === state.collection && msg.step === state.step) {
        status.textContent = `indexing step ${msg.step}: ${msg.episodes.toLocaleString('en')} episodes, ${Math.round((100 * msg.bytes) / Math.max(1, msg.totalBytes))}%`;
        refreshList();
      }
      break;
    case 'page': {
      const gen = pending.get(msg.requestId);
      pending.delete(msg.requestId);
      if (gen !== queryGen) return;
      if (msg.extraKeys.join('\n') !== extraKeys.join('\n')) {
        extraKeys = msg.extraKeys;
        setOptions(extraSelect, extraKeys, state.filters.extraKey, 'any extra key');
      }
      if (msg.dataSources.join('\n') !== dataSources.join('\n')) {
        dataSources = msg.dataSources;
        setOptions(dsSelect, dataSources, state.filters.dataSource, 'any data_source');
      }
      list.setColumns(columnsFor(extraKeys), state.sort);
      list.setBlock(msg.offset, msg.rows, msg.total);
      count.textContent = `${msg.total.toLocaleString('en')} of ${msg.all.toLocaleString('en')} episodes${msg.indexing ? ' (indexing…)' : ''}`;
      break;
    }
    case 'episode':
      if (msg.episode.collection === state.collection && msg.episode.step === state.step && msg.episode.index === openIndex)
        episodeView.show(msg.episode);
      break;
    case 'compare':
      episodeView.showCompare(msg.compare);
      break;
    case 'error':
      status.textContent = msg.message;
      status.classList.add('error');
      break;
    case 'phiMask':
      // Masking turned on or off: ask again for the rows in view and the open episode, which come masked or not.
      if (phiMask.set(msg.on)) {
        queryGen++;
        list.refresh();
        if (list.isEmpty()) fetchPage(0, 100);
        if (openIndex !== undefined) openEpisode(openIndex);
      }
      break;
  }
}

api.post({ type: 'ready' });
