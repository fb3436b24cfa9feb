import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-radio-group/index.js';
import '@vscode-elements/elements/dist/vscode-radio/index.js';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { connect, el } from '../shared/vscode-api';
import {
  fromDashboard,
  toDashboard,
  type DrawnLine,
  fromWire,
  type DashboardChangePoint,
  type DashboardRun,
  type ProvenanceComparison,
  type ToDashboard,
} from '../../src/protocol/dashboard';
import { HEADLINES, headlineKey, type Framework } from '../../src/core/metrics/headline-defs';

/** A run as the page knows it: its metric names and step count; the series itself stays in the extension host. */
interface RunState {
  info: DashboardRun;
  names: string[];
  nameSet: Set<string>;
  steps: number;
  framework: Framework | undefined;
  status: Extract<ToDashboard, { type: 'status' }> | undefined;
  /** How much of its log the first read has read, in percent, while that read is under way. */
  loading: number | undefined;
  /** Steps where its reward or judges changed along the runs it resumed from, and why that walk stopped short. */
  changePoints: DashboardChangePoint[];
  changeNotes: string[];
}

/** A chart: a headline (its key chosen per run) or one metric picked by search. */
interface Chart {
  id: string;
  title: string;
  keyFor(run: RunState): string | undefined;
  removable: boolean;
  section: HTMLElement;
  caption: HTMLElement;
  plotBox: HTMLElement;
  plot?: uPlot;
  /** Series layout the plot was built for (runs and axis), to rebuild it when runs are added. */
  layout?: string;
  /** The change markers its plot draws (changeMarkers), set on each render. */
  markers: Marker[];
  /** The zoomed x range (null: the whole run), set by dragging, the wheel, or a double-click (back to null). */
  range: { x0: number; x1: number } | null;
  /**
   * One `view` in flight at a time: asking again meanwhile (new steps while a big log loads, a zoom) only notes since
   * when it is wanted, and the answer's arrival asks then. The host never gets a backlog of stale views to answer.
   */
  seq: number;
  inFlight: { seq: number; since: number } | undefined;
  wantedSince: number | undefined;
  /** The lines last drawn (for the CSV's keys and the captions). */
  lines: DrawnLine[];
}

/** A vertical marker on a chart's step axis: every change (of the runs the chart shows) at that step. */
interface Marker {
  step: number;
  title: string;
}

const runs = new Map<string, RunState>();
const charts: Chart[] = [];
let xAxis: 'step' | 'time' = 'step';
let smoothing = 0;

const api = connect(toDashboard, fromDashboard, onMessage);

// ---- page layout -------------------------------------------------------------------------------------------------
const app = document.getElementById('app')!;
const runsBar = el('div', { className: 'runs' });
const xSelect = document.createElement('vscode-radio-group');
xSelect.id = 'x-axis';
for (const [value, label] of [
  ['step', 'step'],
  ['time', 'wall time'],
] as const) {
  const o = document.createElement('vscode-radio');
  o.setAttribute('value', value);
  o.setAttribute('name', 'x-axis');
  o.setAttribute('label', label);
  o.id = `x-${value}`;
  if (value === 'step') o.setAttribute('checked', '');
  o.addEventListener('change', () => {
    if (!(o as unknown as { checked: boolean }).checked) return;
    xAxis = value;
    for (const c of charts) {
      c.layout = undefined;
      c.range = null; // a step range means nothing in seconds
    }
    askAll();
  });
  xSelect.append(o);
}
const smoothInput = document.createElement('input');
smoothInput.type = 'range';
smoothInput.id = 'smoothing';
smoothInput.min = '0';
smoothInput.max = '0.99';
smoothInput.step = '0.01';
smoothInput.value = '0';
const smoothLabel = el('span', { className: 'smooth-value', text: '0.00' });
const search = document.createElement('vscode-textfield');
search.id = 'search';
search.setAttribute('placeholder', 'Add a chart: search metrics');
const csvButton = document.createElement('vscode-button');
csvButton.id = 'export-csv';
csvButton.textContent = 'Export CSV';
csvButton.setAttribute('secondary', '');
const results = el('div', { className: 'search-results' });
const problemsBox = el('div', { className: 'problems' });
const changes = el('div', { className: 'changes' });
changes.id = 'what-changed';
changes.hidden = true;
const grid = el('main', { className: 'charts' });
const empty = el('p', { className: 'empty', text: 'Reading metrics…' });

app.append(
  el(
    'header',
    { className: 'toolbar' },
    runsBar,
    el('span', { className: 'spacer' }),
    el('span', { className: 'smooth', text: 'x axis' }),
    xSelect,
    el('label', { className: 'smooth' }, 'Smoothing ', smoothInput, smoothLabel),
    search,
    csvButton,
  ),
  results,
  changes,
  problemsBox,
  empty,
  grid,
);

smoothInput.addEventListener('input', () => {
  smoothing = Number(smoothInput.value);
  smoothLabel.textContent = smoothing.toFixed(2);
  askAll();
});
search.addEventListener('input', () => renderSearch());
csvButton.addEventListener('click', () => exportCsv());

for (const def of HEADLINES) {
  addChart(def.id, def.title, (r) => headlineKey(def, r.names, r.framework), false);
}

api.post({ type: 'ready' });

// ---- messages ----------------------------------------------------------------------------------------------------
function onMessage(msg: ToDashboard): void {
  if (msg.type === 'runs') {
    for (const info of msg.runs)
      if (!runs.has(info.id))
        runs.set(info.id, {
          info,
          names: [],
          nameSet: new Set(),
          steps: 0,
          framework: undefined,
          status: undefined,
          loading: undefined,
          changePoints: [],
          changeNotes: [],
        });
    renderRuns();
  } else if (msg.type === 'provenance') {
    renderChanges(msg.baselineLabel, msg.comparisons);
  } else if (msg.type === 'changePoints') {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.changePoints = msg.points;
    run.changeNotes = msg.notes;
    renderProblems();
    askAll();
  } else if (msg.type === 'metrics') {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.names = msg.names;
    run.nameSet = new Set(msg.names);
    run.framework = msg.framework ?? run.framework;
    run.steps = msg.steps;
    renderRuns();
    renderSearch();
    askAll();
  } else if (msg.type === 'loading') {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.loading = msg.percent;
    renderRuns();
  } else if (msg.type === 'chart') {
    const chart = charts.find((c) => c.id === msg.chartId);
    if (!chart || chart.inFlight?.seq !== msg.seq) return;
    const since = chart.inFlight.since;
    chart.inFlight = undefined;
    const drawing = performance.now();
    draw(chart, msg.lines.map(fromWire), msg.range, msg.error);
    chart.section.dataset.drawMs = (performance.now() - drawing).toFixed(1);
    chart.section.dataset.frameMs = (performance.now() - since).toFixed(1);
    if (chart.wantedSince !== undefined) ask(chart);
    if (chart === refreshing) refreshNext();
  } else {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.status = msg;
    const framework = msg.framework ?? undefined;
    const keysChanged = framework !== run.framework;
    run.framework = framework;
    renderRuns();
    renderProblems();
    // The headline charts' metric names depend on the framework; the steps come with `metrics`. Re-asking every chart on
    // each status (ten runs end loading together) queued a zoom behind a round of all the charts.
    if (keysChanged) askAll();
  }
}

// ---- runs, problems, search --------------------------------------------------------------------------------------
/** A run's colour slot as the theme draws it: slots 0-5 are its six chart colours solid, 6-11 the same dashed. */
function runColour(slot: number): string {
  const names = ['blue', 'orange', 'green', 'purple', 'red', 'yellow'];
  const style = getComputedStyle(document.body);
  const fallback = ['#3794ff', '#d18616', '#89d185', '#b180d7', '#f14c4c', '#cca700'];
  return style.getPropertyValue(`--vscode-charts-${names[slot % names.length]}`).trim() || fallback[slot % fallback.length]!;
}

function dashed(slot: number): boolean {
  return slot % 12 >= 6;
}

function renderRuns(): void {
  runsBar.replaceChildren();
  for (const r of runs.values()) {
    const st = r.status;
    const loading = r.loading === undefined ? 'loading' : `loading ${r.loading}%`;
    const state = st?.error ? `error: ${st.error}` : !st ? loading : st.source === null ? 'no metrics yet' : st.live ? 'live' : 'ended';
    const chip = el(
      'span',
      { className: 'run', title: `${r.info.where}${st?.source ? `\nreading ${st.source}` : ''}` },
      el('span', { className: 'dot' }),
      el('span', { className: 'label', text: r.info.label }),
      el('span', { className: 'meta', text: `${r.steps} steps · ${r.framework ?? '?'} · ${state}` }),
    );
    const dot = chip.firstChild as HTMLElement;
    dot.style.borderColor = runColour(r.info.colour);
    dot.classList.toggle('dashed', dashed(r.info.colour));
    chip.dataset.runId = r.info.id;
    chip.dataset.colour = String(r.info.colour);
    chip.dataset.steps = String(r.steps);
    chip.dataset.state = state;
    runsBar.append(chip);
  }
  const anySteps = [...runs.values()].some((r) => r.steps > 0);
  const errors = [...runs.values()].filter((r) => r.status?.error).map((r) => `${r.info.label}: ${r.status!.error}`);
  empty.textContent = errors.length
    ? errors.join('\n')
    : [...runs.values()].every((r) => r.status)
      ? 'No metrics logged yet: charts appear with the first step.'
      : 'Reading metrics…';
  empty.hidden = anySteps;
}

/** Longest value shown in the strip; the whole value is in the hover. */
const VALUE_CHARS = 40;

function clip(v: string): string {
  return v.length > VALUE_CHARS ? `${v.slice(0, VALUE_CHARS - 1)}…` : v;
}

/** Lines a unified diff adds and removes (its ---/+++ headers apart). */
function diffCounts(diff: string): string {
  const lines = diff.split('\n');
  const added = lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
  const removed = lines.filter((l) => l.startsWith('-') && !l.startsWith('---')).length;
  return `+${added} \u2212${removed}`;
}

/** The "what changed" strip: one line per compared run against the baseline; a reward file's diff opens below it, as text. */
function renderChanges(baseline: string, comparisons: ProvenanceComparison[]): void {
  changes.replaceChildren();
  for (const c of comparisons) {
    const row = el('div', { className: 'change-row' });
    row.dataset.runId = c.runId;
    row.append(el('span', { className: 'versus', text: `${c.label} vs ${baseline}: ` }));
    const items = el('span', { className: 'items' });
    const diffs: HTMLElement[] = [];
    if (c.error) items.append(el('span', { className: 'change error', text: `cannot compare: ${c.error}` }));
    else if (!c.differences.length)
      items.append(
        el('span', {
          className: 'change same',
          text: c.notes.length ? 'same spec and reward (the rest was not recorded)' : 'same spec, reward, data, model and environment',
        }),
      );
    for (const [i, d] of c.differences.entries()) {
      if (i) items.append(el('span', { className: 'sep', text: ' · ' }));
      if (d.diff) {
        const details = el(
          'details',
          { className: 'change reward' },
          el('summary', { text: `${d.path} changed (${diffCounts(d.diff)})`, title: `${d.a} \u2192 ${d.b}` }),
          el('pre', { className: 'diff', text: d.diff }),
        );
        details.dataset.path = d.path;
        items.append(details);
        diffs.push(details);
      } else {
        const item = el('span', {
          className: 'change',
          text: `${d.path} ${clip(d.a)} \u2192 ${clip(d.b)}`,
          title: `${d.path}\n${d.a}\n\u2192 ${d.b}`,
        });
        item.dataset.path = d.path;
        items.append(item);
      }
    }
    row.append(items);
    changes.append(row);
    for (const n of c.notes) changes.append(el('div', { className: 'change-note', text: n }));
  }
  changes.hidden = comparisons.length === 0;
}

function renderProblems(): void {
  const all = [...runs.values()].flatMap((r) => (r.status?.problems ?? []).map((p) => `${r.info.label}: ${p}`));
  const notes = [...runs.values()].flatMap((r) => [...(r.status?.notes ?? []), ...r.changeNotes].map((n) => `${r.info.label}: ${n}`));
  problemsBox.replaceChildren(...notes.map((n) => el('div', { className: 'note', text: n })));
  if (!all.length) return;
  const details = el('details', {}, el('summary', { text: `${all.length} unreadable line(s) skipped or partly read (the rest is shown)` }));
  for (const p of all) details.append(el('div', { className: 'problem', text: p }));
  problemsBox.append(details);
}

function renderSearch(): void {
  const q = ((search as unknown as { value: string }).value ?? '').trim().toLowerCase();
  results.replaceChildren();
  if (!q) return;
  const names = new Set<string>();
  for (const r of runs.values()) for (const n of r.names) if (n.toLowerCase().includes(q)) names.add(n);
  const list = [...names].sort().slice(0, 40);
  if (!list.length) results.append(el('span', { className: 'none', text: `no metric matches "${q}"` }));
  for (const n of list) {
    const b = el('button', { className: 'metric-pick', text: n, title: `Add a chart of ${n}` });
    b.addEventListener('click', () => {
      if (!charts.some((c) => c.id === `m:${n}`)) addChart(`m:${n}`, n, (r) => (r.nameSet.has(n) ? n : undefined), true);
      askAll();
    });
    results.append(b);
  }
}

// ---- charts ------------------------------------------------------------------------------------------------------
function addChart(id: string, title: string, keyFor: Chart['keyFor'], removable: boolean): void {
  const caption = el('span', { className: 'caption' });
  const head = el('div', { className: 'chart-head' }, el('h3', { text: title }), caption);
  if (removable) {
    const close = el('button', { className: 'remove', text: '×', title: 'Remove this chart' });
    close.addEventListener('click', () => {
      const i = charts.findIndex((c) => c.id === id);
      if (i >= 0) {
        const [gone] = charts.splice(i, 1);
        gone!.plot?.destroy();
        gone!.section.remove();
        if (gone === refreshing) refreshNext(); // its answer is dropped: the next stale chart is asked now
      }
    });
    head.append(close);
  }
  const plotBox = el('div', { className: 'plot' });
  const section = el('section', { className: 'chart' }, head, plotBox);
  section.dataset.chart = id;
  section.dataset.points = '0';
  charts.push({
    id,
    title,
    keyFor,
    removable,
    section,
    caption,
    plotBox,
    markers: [],
    range: null,
    seq: 0,
    inFlight: undefined,
    wantedSince: undefined,
    lines: [],
  });
  grid.append(section);
}

/** Pixel columns the plot draws into: one envelope bucket each. */
function plotWidth(chart: Chart): number {
  if (chart.plot) return Math.max(1, Math.round(chart.plot.bbox.width / devicePixelRatio));
  return Math.max(200, (chart.plotBox.clientWidth || 420) - 60);
}

let asking = false;
/**
 * Charts to ask again for new data (steps arrived, a run's status), asked one at a time: the host answers in order, so a
 * zoom asked meanwhile waits behind at most one of them, not a round of every chart (ten runs loading finish together,
 * and each run's last steps asked for all charts again: a first zoom then took 400-770 ms). A chart that lacks a run it
 * could show goes first, top first; the rest take turns in the order they became stale (while big logs load, steps
 * arrive faster than a round of charts, and top first always would leave the lower charts blank).
 */
const stale = new Set<Chart>();
/** The stale chart asked last, until its answer comes. */
let refreshing: Chart | undefined;

/** Asks every chart again on the next frame (new steps, smoothing, axis, runs): many triggers, one request per chart. */
function askAll(): void {
  for (const c of charts) stale.add(c);
  if (asking) return;
  asking = true;
  requestAnimationFrame(() => {
    asking = false;
    refreshNext();
  });
}

function refreshNext(): void {
  if (refreshing?.inFlight && charts.includes(refreshing)) return;
  refreshing = undefined;
  for (const c of stale) if (!charts.includes(c)) stale.delete(c);
  const lacking = charts.filter((c) => stale.has(c) && wantedLines(c).some((l) => !c.lines.some((d) => d.runId === l.runId)));
  for (const c of new Set([...lacking, ...stale])) {
    stale.delete(c);
    ask(c);
    if (c.inFlight) {
      refreshing = c;
      return;
    }
  }
}

/** The runs' lines a chart shows: each run that logs its metric. */
function wantedLines(chart: Chart): { runId: string; key: string }[] {
  return [...runs.values()].flatMap((r) => {
    const key = chart.keyFor(r);
    return key ? [{ runId: r.info.id, key }] : [];
  });
}

/** Asks the extension host for a chart's lines over its range; a chart no run logs stays hidden (a headline) or empty. */
function ask(chart: Chart): void {
  const lines = wantedLines(chart);
  if (!lines.length) {
    chart.inFlight = undefined; // an answer still on its way is stale
    chart.wantedSince = undefined;
    draw(chart, [], null, null);
    if (chart === refreshing) queueMicrotask(refreshNext); // no answer will come for it
    return;
  }
  if (chart.inFlight) {
    chart.wantedSince ??= performance.now();
    return;
  }
  chart.inFlight = { seq: ++chart.seq, since: chart.wantedSince ?? performance.now() };
  chart.wantedSince = undefined;
  api.post({
    type: 'view',
    chartId: chart.id,
    seq: chart.seq,
    axis: xAxis,
    range: chart.range,
    width: plotWidth(chart),
    smoothing,
    lines,
  });
}

/** The run's colour with an alpha, whatever CSS colour form the theme gives (the canvas normalises it to #rrggbb). */
const probe = document.createElement('canvas').getContext('2d')!;
function withAlpha(colour: string, alpha: number): string {
  probe.fillStyle = '#000';
  probe.fillStyle = colour;
  const c = probe.fillStyle;
  if (!c.startsWith('#')) return c;
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** The change points of the runs a chart shows, one marker per step (a change shared along two runs' chains is said once). */
function markersOf(lines: DrawnLine[]): Marker[] {
  if (xAxis !== 'step') return []; // a step has no one wall time across runs
  const byStep = new Map<number, Set<string>>();
  for (const l of lines)
    for (const p of runs.get(l.runId)?.changePoints ?? []) byStep.set(p.step, (byStep.get(p.step) ?? new Set()).add(p.text));
  return [...byStep].sort((a, b) => a[0] - b[0]).map(([step, texts]) => ({ step, title: [...texts].join('\n') }));
}

/**
 * Draws the chart's markers over its plot after each redraw (zoom, new points, resize): DOM elements rather than canvas
 * strokes, so each has its hover title; a step outside the shown range has none.
 */
function changeMarkers(chart: Chart): uPlot.Plugin {
  return {
    hooks: {
      draw: (u) => {
        let layer = u.over.querySelector<HTMLElement>(':scope > .change-markers');
        if (!layer) u.over.append((layer = el('div', { className: 'change-markers' })));
        const min = u.scales.x?.min;
        const max = u.scales.x?.max;
        layer.replaceChildren(
          ...chart.markers
            .filter((m) => min !== undefined && max !== undefined && m.step >= min && m.step <= max)
            .map((m) => {
              const marker = el('div', { className: 'change-marker', title: m.title });
              marker.style.left = `${u.valToPos(m.step, 'x')}px`;
              marker.dataset.step = String(m.step);
              return marker;
            }),
        );
      },
    },
  };
}

/**
 * Zooming and panning: a drag zooms to its span, the wheel zooms about the pointer (with Shift, or sideways, it pans), a
 * double-click shows the whole run again. Each asks the host for the new range at full resolution where it fits.
 */
function zoomControls(chart: Chart): uPlot.Plugin {
  return {
    hooks: {
      setScale: (u, key) => {
        if (key !== 'x' || applying) return;
        const { min, max } = u.scales.x!;
        if (min === undefined || max === undefined || !(max > min)) return;
        // The range the page set itself (the wheel sets it before asking): not a new zoom.
        if (chart.range && near(min, chart.range.x0, max - min) && near(max, chart.range.x1, max - min)) return;
        chart.range = { x0: min, x1: max };
        ask(chart);
      },
      ready: (u) => {
        u.over.addEventListener(
          'wheel',
          (e) => {
            const { min, max } = u.scales.x!;
            if (min === undefined || max === undefined) return;
            e.preventDefault();
            const span = max - min;
            let x0: number;
            let x1: number;
            if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
              const shift = Math.sign(e.shiftKey ? e.deltaY : e.deltaX) * span * 0.1;
              [x0, x1] = [min + shift, max + shift];
            } else {
              const at = u.posToVal(e.offsetX, 'x');
              const factor = e.deltaY > 0 ? 1.25 : 0.8;
              [x0, x1] = [at - (at - min) * factor, at + (max - at) * factor];
            }
            setRange(chart, { x0, x1 });
            ask(chart);
          },
          { passive: false },
        );
      },
    },
  };
}

function near(a: number, b: number, span: number): boolean {
  return Math.abs(a - b) <= span * 1e-9;
}

/** True while the page draws an answer (new data, its range), so the setScale hook does not take it for a zoom. */
let applying = false;

/** Shows a new range at once with the data the chart has, until the answer for it comes. */
function setRange(chart: Chart, range: { x0: number; x1: number }): void {
  chart.range = range;
  chart.plot?.setScale('x', { min: range.x0, max: range.x1 });
}

function duration(s: number): string {
  if (s < 120) return `${Math.round(s)}s`;
  if (s < 7200) return `${Number((s / 60).toFixed(1))}m`;
  return `${(s / 3600).toFixed(1)}h`;
}

/** Draws an answer: per run its mean (or value) line, and the band between each pixel column's exact min and max. */
function draw(chart: Chart, lines: DrawnLine[], range: { x0: number; x1: number } | null, error: string | null): void {
  grid.dataset.x = xAxis;
  chart.lines = lines;
  const points = lines.reduce((n, l) => n + l.logged, 0);
  const label = (l: DrawnLine) => runs.get(l.runId)?.info.label ?? l.runId;
  chart.section.dataset.points = String(points);
  chart.section.dataset.runPoints = lines.map((l) => `${label(l)}=${l.logged}`).join(' ');
  chart.section.dataset.mode = lines.map((l) => l.mode).join(' ');
  // NaN and infinities cannot be drawn; they are named (a diverging loss must be seen) and left as gaps.
  const nonFiniteCount = lines.reduce((n, l) => n + l.nonFiniteCount, 0);
  const named = lines.flatMap((l) => l.nonFinite.map((b) => `${b.value} at step ${b.step}${lines.length > 1 ? ` (${label(l)})` : ''}`));
  chart.section.dataset.nonFinite = String(nonFiniteCount);
  const more = nonFiniteCount - Math.min(3, named.length);
  chart.caption.textContent = `${points} point${points === 1 ? '' : 's'}${lines.length === 1 ? ` · ${lines[0]!.key}` : ''}${nonFiniteCount ? ` · ${named.slice(0, 3).join(', ')}${more > 0 ? ` and ${more} more` : ''}` : ''}`;
  if (error) chart.caption.textContent = `cannot draw: ${error}`;
  chart.caption.title = [
    ...lines.map((l) => `${label(l)}: ${l.key} (${l.logged} points)`),
    lines.some((l) => l.mode === 'envelope') ? 'The band is each pixel column’s exact min and max; the line is its mean.' : '',
  ]
    .filter(Boolean)
    .join('\n');
  // Headline charts a run does not log stay hidden; a searched metric always shows.
  chart.section.hidden = !chart.removable && points === 0 && !error;
  if (chart.section.hidden) return;
  const highest = lines.flatMap((l) => l.hi.filter((v): v is number => v !== null));
  chart.section.dataset.max = highest.length ? String(highest.reduce((a, b) => Math.max(a, b))) : '';
  const tables = lines.map((l) => [l.x, l.y, l.hi, l.lo] as uPlot.AlignedData);
  const data: uPlot.AlignedData = tables.length === 0 ? [[], []] : tables.length === 1 ? tables[0]! : uPlot.join(tables);
  chart.markers = markersOf(lines);
  chart.section.dataset.changeSteps = chart.markers.map((m) => m.step).join(' ');
  const layout = `${xAxis}|${lines.map((l) => l.runId).join(',')}`;
  // In one batch, so uPlot's own scale changes (new data, our range) fire their hooks now, while `applying` says so.
  applying = true;
  try {
    if (!chart.plot || chart.layout !== layout) {
      chart.plot?.destroy();
      chart.plot = newPlot(chart, lines, data, range);
      chart.layout = layout;
    } else {
      const plot = chart.plot;
      plot.batch(() => {
        plot.setData(data);
        if (range && range.x1 > range.x0) plot.setScale('x', { min: range.x0, max: range.x1 });
      });
    }
  } finally {
    applying = false;
  }
  chart.section.dataset.range = range ? `${range.x0} ${range.x1}` : '';
}

function newPlot(chart: Chart, lines: DrawnLine[], data: uPlot.AlignedData, range: { x0: number; x1: number } | null): uPlot {
  const style = getComputedStyle(document.body);
  const fg = style.getPropertyValue('--vscode-descriptionForeground').trim() || '#999';
  const gridColour = style.getPropertyValue('--vscode-editorWidget-border').trim() || 'rgba(128,128,128,0.25)';
  const value = (_u: uPlot, v: number | null) => (v === null ? '' : Number(v.toPrecision(5)).toString());
  const series: uPlot.Series[] = [
    { label: xAxis === 'time' ? 'time' : 'step', value: xAxis === 'time' ? (_u, v) => (v === null ? '' : duration(v)) : undefined },
  ];
  const bands: uPlot.Band[] = [];
  for (const l of lines) {
    const info = runs.get(l.runId)!.info;
    const colour = runColour(info.colour);
    const dash = dashed(info.colour) ? { dash: [6, 3] } : {};
    // The band's edges: drawn faintly, and without a legend row of their own (the `band-edge` class hides it).
    const edge = { stroke: withAlpha(colour, 0.35), width: 1, spanGaps: true, points: { show: false }, value, class: 'band-edge' };
    const first = series.length;
    series.push(
      { label: info.label, stroke: colour, ...dash, width: 1.5, spanGaps: true, value },
      { label: `${info.label} max`, ...edge },
      { label: `${info.label} min`, ...edge },
    );
    bands.push({ series: [first + 1, first + 2], fill: withAlpha(colour, 0.15) });
  }
  return new uPlot(
    {
      width: Math.max(260, chart.plotBox.clientWidth || 420),
      height: 220,
      scales: { x: { time: false } },
      legend: { live: true },
      plugins: [changeMarkers(chart), zoomControls(chart)],
      cursor: {
        drag: { x: true, y: false },
        bind: {
          dblclick: () => () => {
            chart.range = null;
            ask(chart);
            return null;
          },
        },
      },
      axes: [
        {
          stroke: fg,
          grid: { stroke: gridColour, width: 1 },
          ticks: { stroke: gridColour },
          values: xAxis === 'time' ? (_u, vals) => vals.map(duration) : undefined,
          label: xAxis === 'time' ? 'wall time' : 'step',
          labelSize: 16,
        },
        { stroke: fg, grid: { stroke: gridColour, width: 1 }, ticks: { stroke: gridColour }, size: 56 },
      ],
      series,
      bands,
    },
    data,
    (u, init) => {
      chart.plotBox.append(u.root);
      u.batch(() => {
        init();
        // One step has no width: uPlot pads its own range around it (a zero-wide scale makes its axes throw).
        if (range && range.x1 > range.x0) u.setScale('x', { min: range.x0, max: range.x1 });
      });
    },
  );
}

// Charts are as wide as the grid's columns, which only its width sets (auto-fill). Its height changes whenever a legend or a
// caption does: re-asking every chart then queued the chart being zoomed behind all the others (a 400-600 ms frame).
let gridWidth = -1;
new ResizeObserver((entries) => {
  const width = Math.round(entries[entries.length - 1]!.contentRect.width);
  if (width === gridWidth) return;
  gridWidth = width;
  for (const c of charts) if (c.plot && !c.section.hidden) c.plot.setSize({ width: Math.max(260, c.plotBox.clientWidth), height: 220 });
  askAll(); // one bucket per pixel column: a new width needs new buckets
}).observe(grid);

// ---- CSV ---------------------------------------------------------------------------------------------------------
/** The shown charts' metrics, every logged step of each (the host holds them), raw and as smoothed now. */
function exportCsv(): void {
  const lines = charts.filter((c) => !c.section.hidden).flatMap((c) => c.lines.map((l) => ({ runId: l.runId, key: l.key })));
  const first = [...runs.values()][0]?.info.label ?? 'metrics';
  api.post({ type: 'exportCsv', smoothing, lines, suggestedName: `${runs.size > 1 ? 'compare' : first}-metrics.csv` });
}
