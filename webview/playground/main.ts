import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { connect, el } from '../shared/vscode-api';
import { PhiMaskBar } from '../shared/phi-mask-bar';
import {
  fromPlayground,
  toPlayground,
  type PlaygroundResult,
  type PlaygroundSample,
  type ScorerRef,
  type ToPlayground,
} from '../../src/protocol/playground';

interface Field extends HTMLElement {
  value: string;
  checked?: boolean;
}

type Side = 'a' | 'b';
type Init = Extract<ToPlayground, { type: 'init' }>;

let init: Init | undefined;
let samples: PlaygroundSample[] = [];
let results: Record<Side, Array<PlaygroundResult | undefined>> = { a: [], b: [] };
let labels: Record<string, string> = {};
let sides: Side[] = ['a'];
let running = false;
let plot: uPlot | undefined;

const api = connect(toPlayground, fromPlayground, onMessage);
const app = document.getElementById('app')!;

function button(text: string, icon: string, onClick: () => void, id: string, secondary = true): HTMLElement {
  const b = el('vscode-button', { text });
  b.id = id;
  b.setAttribute('icon', icon);
  if (secondary) b.setAttribute('secondary', '');
  b.addEventListener('click', onClick);
  return b;
}

function select(id: string, label: string): Field {
  const s = document.createElement('vscode-single-select') as unknown as Field;
  s.id = id;
  s.setAttribute('aria-label', label);
  return s;
}

function textfield(id: string, placeholder: string, value = ''): Field {
  const f = el('vscode-textfield') as unknown as Field;
  f.id = id;
  f.setAttribute('placeholder', placeholder);
  f.setAttribute('aria-label', placeholder);
  f.value = value;
  return f;
}

// --- toolbar ------------------------------------------------------------------------------------------------------
const scorerA = select('scorer-a', 'Scorer A');
const scorerB = select('scorer-b', 'Scorer B (compare)');
const hostPick = select('host', 'Host the reward functions run on');
const threshold = textfield('threshold', 'pass threshold', '0.5');
const bypass = document.createElement('vscode-checkbox') as unknown as Field;
bypass.setAttribute('label', 'bypass judge cache');
const ring = document.createElement('vscode-progress-ring');
ring.hidden = true;
const status = el('span', { className: 'status', text: 'Load samples, pick a reward function or a judge, run.' });
status.id = 'status';
status.setAttribute('role', 'status');
const judgeParams = el('div', { className: 'muted judge-params' });
const summary = el('div', { className: 'summary' });
summary.id = 'summary';
const problems = el('div', { className: 'problems' });

const runAll = button('Run all', 'run-all', () => run(null), 'run-all', false);
const runSelected = button('Run selected', 'play', () => run(checkedIndexes()), 'run-selected');
const cancel = button('Cancel', 'debug-stop', () => api.post({ type: 'cancel' }), 'cancel');

function scorerOf(value: string): ScorerRef | null {
  if (!value) return null;
  const [kind, ...rest] = value.split('\u0000');
  if (kind === 'judge') return { kind: 'judge', name: rest[0]! };
  return { kind: 'function', path: rest[0]!, name: rest[1] || undefined };
}

function run(indexes: number[] | null): void {
  const a = scorerOf(scorerA.value);
  if (!a) return setStatus('Pick scorer A: a reward function or a judge.', true);
  const t = Number(threshold.value);
  if (!hostPick.value) return setStatus('Pick the host reward functions run on.', true);
  api.post({
    type: 'run',
    a,
    b: scorerOf(scorerB.value),
    host: hostPick.value,
    indexes,
    threshold: Number.isFinite(t) ? t : 0.5,
    bypassCache: bypass.checked === true,
  });
}

function setStatus(text: string, error = false): void {
  status.textContent = text;
  status.classList.toggle('error', error);
}

const toolbar = el(
  'div',
  { className: 'toolbar' },
  el('label', { text: 'A' }),
  scorerA,
  el('label', { text: 'B' }),
  scorerB,
  el('label', { text: 'on' }),
  hostPick,
  el('label', { text: 'pass ≥' }),
  threshold,
  bypass,
  runAll,
  runSelected,
  cancel,
  ring,
);
// The extension sends the samples and results again when masking is turned on or off.
const phiMask = new PhiMaskBar((on) => api.post({ type: 'setPhiMask', on }));
const fileBar = el(
  'div',
  { className: 'toolbar' },
  button('Load samples…', 'folder-opened', () => api.post({ type: 'pickDataset' }), 'load-samples'),
  button('Load regression cases', 'history', () => withFunction((fn) => api.post({ type: 'loadCases', fn })), 'load-cases'),
  button('Save expected as cases', 'save', () => withFunction((fn) => api.post({ type: 'saveCases', fn })), 'save-cases'),
  button('Export CSV', 'export', () => api.post({ type: 'export', format: 'csv' }), 'export-csv'),
  button('Export JSONL', 'json', () => api.post({ type: 'export', format: 'jsonl' }), 'export-jsonl'),
  phiMask.root,
);

function withFunction(fn: (ref: ScorerRef) => void): void {
  const a = scorerOf(scorerA.value);
  if (a?.kind !== 'function') return setStatus('Pick a reward function as scorer A: regression cases are kept next to it.', true);
  fn(a);
}

// --- a sample typed by hand ---------------------------------------------------------------------------------------
const newSource = textfield('new-data-source', 'data_source');
const newSolution = el('vscode-textarea') as unknown as Field;
newSolution.id = 'new-solution';
newSolution.setAttribute('placeholder', 'solution_str (the model response)');
const newTruth = textfield('new-ground-truth', 'ground_truth (text or JSON)');
const newExtra = textfield('new-extra-info', 'extra_info (JSON, optional)');
const addForm = el(
  'details',
  { className: 'add' },
  el('summary', { text: 'Add a sample by hand' }),
  newSource,
  newSolution,
  newTruth,
  newExtra,
  button('Add sample', 'add', addSample, 'add-sample'),
);

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function addSample(): void {
  if (!newSolution.value.trim()) return setStatus('A sample needs a solution_str.', true);
  let extra: unknown = null;
  if (newExtra.value.trim()) {
    try {
      extra = JSON.parse(newExtra.value);
    } catch (err) {
      return setStatus(`extra_info is not JSON: ${String(err)}`, true);
    }
  }
  api.post({
    type: 'addSample',
    sample: {
      data_source: newSource.value,
      solution_str: newSolution.value,
      ground_truth: parseMaybeJson(newTruth.value),
      extra_info: extra,
    },
  });
  newSolution.value = '';
}

// --- results ------------------------------------------------------------------------------------------------------
const chart = el('div', { className: 'chart' });
const table = el('table', { className: 'results' });
table.id = 'results';
const tbody = el('tbody');
/** Rows whose details are open; kept across re-renders as results stream in. */
const expanded = new Set<number>();
let columnCount = 0;
app.append(toolbar, judgeParams, fileBar, addForm, status, problems, summary, chart, el('div', { className: 'table-wrap' }, table));

function short(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Text for a one-line cell: whitespace folded, cut well past any column width (CSS ellipsises the rest). */
function oneLine(value: unknown): string {
  return short(value, 400).replace(/\s+/g, ' ');
}

/** A value in full for the details: text as it is, anything else as indented JSON. */
function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function fmt(score: number | null | undefined): string {
  return score === null || score === undefined ? '–' : Number.isInteger(score) ? String(score) : score.toFixed(3);
}

function hasTraining(): boolean {
  return samples.some((s) => s.trainingScore !== undefined);
}

function checkedIndexes(): number[] {
  return [...tbody.querySelectorAll<HTMLInputElement>('input.pick:checked')].map((c) => Number(c.dataset.index));
}

/** Columns and their widths (style.css): narrow fixed ones for checkboxes and numbers, flexible ones for text. */
function header(): void {
  const cols: Array<[string, string, string?]> = [
    ['pick', ''],
    ['index', '#'],
    ['source', 'data_source'],
    ['sample', 'solution_str'],
    ['truth', 'ground_truth'],
    ['expected', 'expected'],
    ...(hasTraining() ? [['narrow', 'training'] as [string, string]] : []),
  ];
  for (const s of sides) {
    const label = labels[s] ?? '';
    const S = s.toUpperCase();
    cols.push(['narrow', `${S} score`, label], ['narrow', `${S} ms`, label], ['error', `${S} error`, label]);
  }
  columnCount = cols.length;
  table.classList.toggle('compare', sides.length > 1);
  const tr = el('tr');
  for (const [, text, title] of cols) tr.append(el('th', { text, title: title ?? '' }));
  const colgroup = el('colgroup');
  for (const [className] of cols) colgroup.append(el('col', { className }));
  table.replaceChildren(colgroup, el('thead', {}, tr), tbody);
}

function cellsFor(r: PlaygroundResult | undefined, expected: number | undefined): HTMLElement[] {
  if (!r) return [el('td', { className: 'score', text: '' }), el('td'), el('td')];
  const mismatch = expected !== undefined && r.score !== null && Math.abs(r.score - expected) > 1e-6;
  const score = el('td', {
    className: `score${r.error ? ' failed' : ''}${mismatch ? ' mismatch' : ''}`,
    text: fmt(r.score),
    title: mismatch ? `expected ${expected}` : '',
  });
  return [
    score,
    el('td', { className: 'num', text: String(Math.round(r.latencyMs)) }),
    el('td', { className: 'line error', text: oneLine(r.error) }),
  ];
}

function row(i: number): HTMLTableRowElement {
  const s = samples[i]!;
  const pick = el('input', { className: 'pick' });
  pick.type = 'checkbox';
  pick.dataset.index = String(i);
  pick.setAttribute('aria-label', `select sample ${i}`);
  const expected = el('input', { className: 'expected' });
  expected.type = 'number';
  expected.step = 'any';
  expected.placeholder = 'mark';
  expected.setAttribute('aria-label', `expected score of sample ${i}`);
  if (s.expected !== undefined) expected.value = String(s.expected);
  expected.addEventListener('change', () => {
    const v = expected.value.trim() === '' ? null : Number(expected.value);
    if (v !== null && !Number.isFinite(v)) return;
    if (v === null) delete s.expected;
    else s.expected = v;
    api.post({ type: 'setExpected', index: i, expected: v });
    renderRow(i);
  });
  const open = expanded.has(i);
  const chevron = el('span', { className: 'chevron' });
  chevron.setAttribute('aria-hidden', 'true');
  const tr = el(
    'tr',
    { className: 'sample', title: open ? 'Hide the details' : 'Show the details' },
    el('td', {}, pick),
    el('td', { className: 'num index' }, chevron, String(i)),
    el('td', { className: 'line', text: s.data_source }),
    el('td', { className: 'line solution', text: oneLine(s.solution_str) }),
    el('td', { className: 'line', text: oneLine(s.ground_truth) }),
    el('td', {}, expected),
  );
  if (hasTraining()) tr.append(el('td', { className: 'num training', text: fmt(s.trainingScore) }));
  tr.dataset.index = String(i);
  tr.tabIndex = 0;
  tr.setAttribute('aria-expanded', String(open));
  tr.setAttribute('aria-controls', `detail-${i}`);
  for (const side of sides) tr.append(...cellsFor(results[side][i], s.expected));
  // The row's own inputs keep their clicks and keys; anywhere else on the row opens or closes it.
  tr.addEventListener('click', (e) => {
    if (!(e.target as Element).closest('input')) toggle(i);
  });
  tr.addEventListener('keydown', (e) => {
    if (e.target === tr && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      toggle(i);
    }
  });
  return tr;
}

/** A labelled block of the details: text or JSON in full, wrapping, in the editor font. */
function block(title: string, text: string, className: string): HTMLElement[] {
  return text ? [el('h4', { text: title }), el('pre', { className, text })] : [];
}

/** The full width row under an expanded one: the sample and each side's answer, details, output and error in full. */
function detailRow(i: number): HTMLTableRowElement {
  const s = samples[i]!;
  const box = el(
    'div',
    { className: 'details' },
    ...block('solution_str', s.solution_str, 'text solution-full'),
    ...block('ground_truth', pretty(s.ground_truth), 'json'),
    ...(s.prompt === undefined
      ? []
      : block('prompt', typeof s.prompt === 'string' ? s.prompt : s.prompt.map((m) => `${m.role}: ${m.content}`).join('\n\n'), 'text')),
    ...(s.extra_info === undefined || s.extra_info === null ? [] : block('extra_info', pretty(s.extra_info), 'json')),
  );
  for (const side of sides) {
    const r = results[side][i];
    if (!r) continue;
    const facts = [`score ${fmt(r.score)}`, `${Math.round(r.latencyMs)} ms`];
    if (r.attempts && r.attempts > 1) facts.push(`${r.attempts} attempts`);
    if (r.cached) facts.push('cached');
    const part = el(
      'section',
      { className: `side side-${side}` },
      el('h3', { text: `${side.toUpperCase()} ${labels[side] ?? ''}: ${facts.join(' · ')}` }),
    );
    part.append(
      ...block('answer', r.raw ?? '', 'text answer'),
      ...block('details', r.detail ? pretty(r.detail) : '', 'json detail'),
      ...block('output', [r.stdout, r.stderr].filter(Boolean).join('\n'), 'text output'),
      ...block('error', [r.error, r.traceback].filter(Boolean).join('\n\n'), 'text error'),
    );
    box.append(part);
  }
  const td = el('td', {}, box);
  td.colSpan = columnCount;
  const tr = el('tr', { className: 'detail' }, td);
  tr.id = `detail-${i}`;
  return tr;
}

function toggle(i: number): void {
  if (!expanded.delete(i)) expanded.add(i);
  renderRow(i);
  tbody.querySelector<HTMLElement>(`tr.sample[data-index="${i}"]`)?.focus();
}

/** Draws sample i again (with its details when open); focus stays on the row if it was there. */
function renderRow(i: number): void {
  const old = tbody.querySelector(`tr.sample[data-index="${i}"]`);
  if (!old) return;
  const focused = document.activeElement === old;
  document.getElementById(`detail-${i}`)?.remove();
  const tr = row(i);
  old.replaceWith(tr, ...(expanded.has(i) ? [detailRow(i)] : []));
  if (focused) tr.focus();
}

function renderTable(): void {
  header();
  tbody.replaceChildren(...samples.flatMap((_, i) => (expanded.has(i) ? [row(i), detailRow(i)] : [row(i)])));
}

function renderSummary(agreement?: Extract<ToPlayground, { type: 'runDone' }>['agreement'], against?: 'b' | 'training' | null): void {
  const parts: string[] = [];
  for (const s of sides) {
    const rs = results[s].filter((r): r is PlaygroundResult => r !== undefined);
    if (!rs.length) continue;
    const scored = rs.filter((r) => r.score !== null).map((r) => r.score!);
    const mean = scored.length ? scored.reduce((x, y) => x + y, 0) / scored.length : NaN;
    const vsExpected = rs.filter((r) => samples[r.index]?.expected !== undefined);
    const passed = vsExpected.filter((r) => r.score !== null && Math.abs(r.score - samples[r.index]!.expected!) <= 1e-6).length;
    parts.push(
      `${s.toUpperCase()} (${labels[s] ?? ''}): ${rs.length} run, mean ${Number.isNaN(mean) ? '–' : mean.toFixed(3)}, ${rs.filter((r) => r.error).length} errors${vsExpected.length ? `, ${passed}/${vsExpected.length} match expected` : ''}`,
    );
  }
  if (agreement) {
    parts.push(
      `${against === 'training' ? 'Back-test: A against the training scores' : 'Agreement A vs B'} on ${agreement.n} samples: Pearson r ${fmt(agreement.pearson)}, Cohen's κ ${fmt(agreement.kappa)} (pass ≥ ${agreement.threshold}), same pass/fail ${agreement.agreement === null ? '–' : `${(agreement.agreement * 100).toFixed(1)}%`}${agreement.disagreements.length ? `; differ on #${agreement.disagreements.slice(0, 20).join(', #')}` : ''}`,
    );
  }
  summary.replaceChildren(...parts.map((p) => el('div', { text: p })));
  renderHistogram();
}

function renderHistogram(): void {
  const bins = 10;
  const all = sides.flatMap((s) => results[s].map((r) => r?.score).filter((x): x is number => typeof x === 'number'));
  if (!all.length) {
    plot?.destroy();
    plot = undefined;
    return;
  }
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const width = (hi - lo) / bins;
  const xs = Array.from({ length: bins }, (_, i) => lo + (i + 0.5) * width);
  const counts = sides.map((s) => {
    const c = new Array<number>(bins).fill(0);
    for (const r of results[s]) if (typeof r?.score === 'number') c[Math.min(bins - 1, Math.floor((r.score - lo) / width))]!++;
    return c;
  });
  const style = getComputedStyle(document.body);
  const colours = [
    style.getPropertyValue('--vscode-charts-blue') || '#3794ff',
    style.getPropertyValue('--vscode-charts-orange') || '#d18616',
  ];
  const bars = uPlot.paths.bars!({ size: [0.8 / sides.length, 60], align: 0 });
  plot?.destroy();
  plot = new uPlot(
    {
      width: Math.min(700, chart.clientWidth || 600),
      height: 160,
      title: 'Score histogram',
      scales: { x: { time: false } },
      axes: [{ stroke: style.getPropertyValue('--vscode-foreground') }, { stroke: style.getPropertyValue('--vscode-foreground') }],
      series: [
        { label: 'score' },
        ...sides.map((s, k) => ({ label: `${s.toUpperCase()} count`, stroke: colours[k], fill: `${colours[k]!.trim()}88`, paths: bars })),
      ],
    },
    [xs, ...counts],
    chart,
  );
}

function fillSelect(s: Field, options: Array<[string, string]>, value: string): void {
  s.replaceChildren(
    ...options.map(([v, text]) => {
      const o = document.createElement('vscode-option') as unknown as Field;
      o.setAttribute('value', v);
      o.textContent = text;
      if (v === value) o.setAttribute('selected', '');
      return o;
    }),
  );
  s.value = value;
}

function showJudgeParams(): void {
  if (!init) return;
  const used = [scorerA.value, scorerB.value].map(scorerOf).filter((r): r is Extract<ScorerRef, { kind: 'judge' }> => r?.kind === 'judge');
  judgeParams.textContent = used
    .map((r) => {
      const j = init!.judges.find((x) => x.name === r.name);
      return j ? `judge ${j.name}: ${j.model} at ${j.url}, temperature ${j.temperature}, seed ${j.seed ?? 'none'}, score ${j.parser}` : '';
    })
    .join(' · ');
}
scorerA.addEventListener('change', showJudgeParams);
scorerB.addEventListener('change', showJudgeParams);

function onMessage(msg: ToPlayground): void {
  switch (msg.type) {
    case 'init': {
      init = msg;
      const options: Array<[string, string]> = [
        ...msg.functions.map((f) => [`function\u0000${f.path}\u0000${f.name}`, `ƒ ${f.label} (${f.kind})`] as [string, string]),
        ...msg.judges.map((j) => [`judge\u0000${j.name}`, `⚖ judge ${j.name} (${j.model})`] as [string, string]),
      ];
      const sel = msg.selected;
      const selected = sel
        ? sel.kind === 'judge'
          ? `judge\u0000${sel.name}`
          : (options.find(([v]) => v.startsWith(`function\u0000${sel.path}\u0000${sel.name ?? ''}`))?.[0] ?? '')
        : (options[0]?.[0] ?? '');
      fillSelect(scorerA, options, selected);
      fillSelect(scorerB, [['', '— none —'], ...options], '');
      // A host picked earlier stays picked when medrl.yaml changes, as long as it is still there.
      const host = msg.hosts.some((h) => h.name === hostPick.value) ? hostPick.value : msg.host;
      fillSelect(
        hostPick,
        msg.hosts.map((h) => [h.name, h.kind === 'local' ? `${h.name} (this machine)` : `${h.name} (ssh)`]),
        host,
      );
      showJudgeParams();
      if (!msg.trusted) setStatus('This workspace is not trusted: reward functions and judges do not run here.', true);
      return;
    }
    case 'samples':
      samples = msg.samples;
      results = { a: [], b: [] };
      for (const side of ['a', 'b'] as const) for (const r of msg.results?.[side] ?? []) results[side][r.index] = r;
      expanded.clear();
      renderTable();
      renderSummary();
      problems.replaceChildren(...msg.problems.map((p) => el('div', { text: p })));
      setStatus(
        `${samples.length} samples from ${msg.source}${msg.problems.length ? `; ${msg.problems.length} rows could not be read (below)` : ''}.`,
        msg.problems.length > 0,
      );
      return;
    case 'runStarted':
      running = true;
      ring.hidden = false;
      sides = msg.sides;
      labels = msg.labels;
      for (const s of sides) results[s] = [];
      renderTable();
      setStatus(`Running 0/${msg.total}…`);
      return;
    case 'results':
      for (const r of msg.results) {
        results[msg.side][r.index] = r;
        renderRow(r.index);
      }
      setStatus(`Running: ${msg.side.toUpperCase()} ${msg.done}/${msg.total}…`);
      return;
    case 'runDone':
      running = false;
      ring.hidden = true;
      renderSummary(msg.agreement, msg.against);
      setStatus(msg.cancelled ? 'Stopped.' : 'Done.');
      return;
    case 'notice':
      setStatus(msg.message, msg.level === 'error');
      return;
    case 'phiMask':
      phiMask.set(msg.on);
      return;
  }
}

// Running keeps Run disabled until the batch ends.
setInterval(() => {
  runAll.toggleAttribute('disabled', running);
  runSelected.toggleAttribute('disabled', running);
  cancel.toggleAttribute('disabled', !running);
}, 250);
api.post({ type: 'ready' });
