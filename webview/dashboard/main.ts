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
  type DashboardChangePoint,
  type DashboardRun,
  type ProvenanceComparison,
  type ToDashboard,
} from '../../src/protocol/dashboard';
import { MetricSeries } from '../../src/core/metrics/metric-series';
import { HEADLINES, headlineKey, type Framework } from '../../src/core/metrics/headline-defs';
import { smoothEma } from './smoothing';
import { toCsv, type CsvRow } from './csv';

interface RunState {
  info: DashboardRun;
  series: MetricSeries;
  framework: Framework | undefined;
  status: Extract<ToDashboard, { type: 'status' }> | undefined;
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
  /** Series layout the plot was built for (labels), to rebuild it when runs are added. */
  layout?: string;
  /** The change markers its plot draws (changeMarkers), set on each render. */
  markers: Marker[];
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
    for (const c of charts) c.layout = undefined;
    scheduleRender();
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
  scheduleRender();
});
search.addEventListener('input', () => renderSearch());
csvButton.addEventListener('click', () => exportCsv());

for (const def of HEADLINES) {
  addChart(def.id, def.title, (r) => headlineKey(def, r.series.metricNames(), r.framework), false);
}

api.post({ type: 'ready' });

// ---- messages ----------------------------------------------------------------------------------------------------
function onMessage(msg: ToDashboard): void {
  if (msg.type === 'runs') {
    for (const info of msg.runs)
      if (!runs.has(info.id))
        runs.set(info.id, { info, series: new MetricSeries(), framework: undefined, status: undefined, changePoints: [], changeNotes: [] });
    renderRuns();
  } else if (msg.type === 'provenance') {
    renderChanges(msg.baselineLabel, msg.comparisons);
  } else if (msg.type === 'changePoints') {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.changePoints = msg.points;
    run.changeNotes = msg.notes;
    renderProblems();
    scheduleRender();
  } else if (msg.type === 'points') {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.series.applyChanges(msg.changes);
    renderRuns();
    scheduleRender();
  } else {
    const run = runs.get(msg.runId);
    if (!run) return;
    run.status = msg;
    run.framework = msg.framework ?? undefined;
    renderRuns();
    renderProblems();
    scheduleRender();
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
    const state = st?.error ? `error: ${st.error}` : !st ? 'loading' : st.source === null ? 'no metrics yet' : st.live ? 'live' : 'ended';
    const chip = el(
      'span',
      { className: 'run', title: `${r.info.where}${st?.source ? `\nreading ${st.source}` : ''}` },
      el('span', { className: 'dot' }),
      el('span', { className: 'label', text: r.info.label }),
      el('span', { className: 'meta', text: `${r.series.length} steps · ${r.framework ?? '?'} · ${state}` }),
    );
    const dot = chip.firstChild as HTMLElement;
    dot.style.borderColor = runColour(r.info.colour);
    dot.classList.toggle('dashed', dashed(r.info.colour));
    chip.dataset.runId = r.info.id;
    chip.dataset.colour = String(r.info.colour);
    chip.dataset.steps = String(r.series.length);
    chip.dataset.state = state;
    runsBar.append(chip);
  }
  const anySteps = [...runs.values()].some((r) => r.series.length > 0);
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
  for (const r of runs.values()) for (const n of r.series.metricNames()) if (n.toLowerCase().includes(q)) names.add(n);
  const list = [...names].sort().slice(0, 40);
  if (!list.length) results.append(el('span', { className: 'none', text: `no metric matches "${q}"` }));
  for (const n of list) {
    const b = el('button', { className: 'metric-pick', text: n, title: `Add a chart of ${n}` });
    b.addEventListener('click', () => {
      if (!charts.some((c) => c.id === `m:${n}`)) addChart(`m:${n}`, n, (r) => (r.series.has(n) ? n : undefined), true);
      scheduleRender();
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
        charts[i]!.plot?.destroy();
        charts[i]!.section.remove();
        charts.splice(i, 1);
      }
    });
    head.append(close);
  }
  const plotBox = el('div', { className: 'plot' });
  const section = el('section', { className: 'chart' }, head, plotBox);
  section.dataset.chart = id;
  section.dataset.points = '0';
  charts.push({ id, title, keyFor, removable, section, caption, plotBox, markers: [] });
  grid.append(section);
}

interface Line {
  run: RunState;
  key: string;
  x: number[];
  steps: number[];
  elapsed: number[];
  raw: number[];
  y: number[];
}

/** The points a chart shows for each run: its key's logged values against the chosen x, smoothed. */
function linesOf(chart: Chart): Line[] {
  const out: Line[] = [];
  for (const run of runs.values()) {
    const key = chart.keyFor(run);
    if (!key) continue;
    const col = run.series.column(key);
    const elapsed = run.series.elapsedSeconds();
    const steps: number[] = [];
    const el: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < col.length; i++) {
      const v = col[i];
      if (v === undefined) continue;
      if (xAxis === 'time' && Number.isNaN(elapsed[i]!)) continue;
      steps.push(run.series.steps[i]!);
      el.push(elapsed[i]!);
      raw.push(v);
    }
    out.push({ run, key, x: xAxis === 'time' ? el : steps, steps, elapsed: el, raw, y: smoothEma(raw, smoothing) });
  }
  return out;
}

/** The change points of the runs a chart shows, one marker per step (a change shared along two runs' chains is said once). */
function markersOf(lines: Line[]): Marker[] {
  if (xAxis !== 'step') return []; // a step has no one wall time across runs
  const byStep = new Map<number, Set<string>>();
  for (const l of lines) for (const p of l.run.changePoints) byStep.set(p.step, (byStep.get(p.step) ?? new Set()).add(p.text));
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

function duration(s: number): string {
  if (s < 120) return `${Math.round(s)}s`;
  if (s < 7200) return `${Number((s / 60).toFixed(1))}m`;
  return `${(s / 3600).toFixed(1)}h`;
}

let pending = false;
function scheduleRender(): void {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    render();
  });
}

function render(): void {
  grid.dataset.x = xAxis;
  const style = getComputedStyle(document.body);
  const fg = style.getPropertyValue('--vscode-descriptionForeground').trim() || '#999';
  const gridColour = style.getPropertyValue('--vscode-editorWidget-border').trim() || 'rgba(128,128,128,0.25)';
  for (const chart of charts) {
    const lines = linesOf(chart);
    const points = lines.reduce((n, l) => n + l.raw.length, 0);
    chart.section.dataset.points = String(points);
    chart.section.dataset.runPoints = lines.map((l) => `${l.run.info.label}=${l.raw.length}`).join(' ');
    // NaN and infinities cannot be drawn; they are named (a diverging loss must be seen) and left as gaps.
    const nonFinite = lines.flatMap((l) =>
      l.raw.flatMap((v, i) =>
        Number.isFinite(v) ? [] : [`${v} at step ${l.steps[i]}${lines.length > 1 ? ` (${l.run.info.label})` : ''}`],
      ),
    );
    chart.section.dataset.nonFinite = String(nonFinite.length);
    chart.caption.textContent = `${points} point${points === 1 ? '' : 's'}${lines.length === 1 ? ` · ${lines[0]!.key}` : ''}${nonFinite.length ? ` · ${nonFinite.slice(0, 3).join(', ')}${nonFinite.length > 3 ? ` and ${nonFinite.length - 3} more` : ''}` : ''}`;
    chart.caption.title = lines.map((l) => `${l.run.info.label}: ${l.key} (${l.raw.length} points)`).join('\n');
    // Headline charts a run does not log stay hidden; a searched metric always shows.
    chart.section.hidden = !chart.removable && points === 0;
    if (chart.section.hidden) continue;
    const tables = lines.map((l) => [l.x, l.y.map((v) => (Number.isFinite(v) ? v : null))] as uPlot.AlignedData);
    const data: uPlot.AlignedData = tables.length === 0 ? [[], []] : tables.length === 1 ? tables[0]! : uPlot.join(tables);
    chart.markers = markersOf(lines);
    chart.section.dataset.changeSteps = chart.markers.map((m) => m.step).join(' ');
    const layout = `${xAxis}|${lines.map((l) => l.run.info.id).join(',')}`;
    if (!chart.plot || chart.layout !== layout) {
      chart.plot?.destroy();
      const width = Math.max(260, chart.plotBox.clientWidth || 420);
      chart.plot = new uPlot(
        {
          width,
          height: 220,
          scales: { x: { time: false } },
          legend: { live: true },
          plugins: [changeMarkers(chart)],
          cursor: { drag: { x: true, y: false } },
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
          series: [
            { label: xAxis === 'time' ? 'time' : 'step', value: xAxis === 'time' ? (_u, v) => (v === null ? '' : duration(v)) : undefined },
            ...lines.map((l) => ({
              label: l.run.info.label,
              stroke: runColour(l.run.info.colour),
              ...(dashed(l.run.info.colour) ? { dash: [6, 3] } : {}),
              width: 1.5,
              spanGaps: true,
              points: { show: l.raw.length < 60 },
              value: (_u: uPlot, v: number | null) => (v === null ? '' : Number(v.toPrecision(5)).toString()),
            })),
          ],
        },
        data,
        chart.plotBox,
      );
      chart.layout = layout;
    } else {
      chart.plot.setData(data);
    }
  }
}

new ResizeObserver(() => {
  for (const c of charts) if (c.plot && !c.section.hidden) c.plot.setSize({ width: Math.max(260, c.plotBox.clientWidth), height: 220 });
}).observe(grid);

// ---- CSV ---------------------------------------------------------------------------------------------------------
function exportCsv(): void {
  const rows: CsvRow[] = [];
  for (const chart of charts) {
    if (chart.section.hidden) continue;
    for (const l of linesOf(chart)) {
      for (let i = 0; i < l.raw.length; i++)
        rows.push({
          run: l.run.info.label,
          metric: l.key,
          step: l.steps[i]!,
          elapsedSeconds: l.elapsed[i]!,
          value: l.raw[i]!,
          smoothed: l.y[i]!,
        });
    }
  }
  const first = [...runs.values()][0]?.info.label ?? 'metrics';
  api.post({ type: 'exportCsv', csv: toCsv(rows), suggestedName: `${runs.size > 1 ? 'compare' : first}-metrics.csv` });
}
