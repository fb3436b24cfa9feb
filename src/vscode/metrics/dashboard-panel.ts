import * as vscode from 'vscode';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deps } from '../deps';
import { openWebviewPanel, type TypedWebviewPanel } from '../webview/webview-panel';
import { fromDashboard, toDashboard, toWire, type FromDashboard, type ToDashboard } from '../../protocol/dashboard';
import { openMetricsSource, type MetricsSource } from '../../core/metrics/run-metrics';
import { toJsonMetric } from '../../core/metrics/json-metric';
import { SeriesCharts } from '../../core/metrics/chart-view';
import { metricsCsv } from '../../core/metrics/metrics-csv';
import type { Framework } from '../../core/metrics/metric-log-parser';
import { errorMessage, formatProblem } from '../../core/errors/located-error';
import type { RunRecord } from '../../core/runs/run-record';
import type { RunProvenance } from '../../core/runs/read-provenance';
import { diffProvenance } from '../../core/runs/provenance-diff';
import { valueText } from '../../core/runs/provenance-text';
import { changePointText, resumeChanges } from '../../core/runs/provenance-changes';
import { colourSlots } from '../../core/metrics/colour-slots';
import type { MetricsCache } from '../../core/metrics/metrics-cache';
import { metricsCache } from './metrics-cache-setting';

/** Something to chart: a run folder or a metrics file on a host. */
export interface DashboardTarget {
  host: string;
  path: string;
  framework?: Framework;
  name?: string;
  /** The run's record, when it is a run of the Runs view: its provenance can then be compared. */
  record?: RunRecord;
}

/** How often a live run's file is read again (only the bytes after the last complete line). */
const POLL_MS = 1500;
/** Bytes read before the page is told what is there so far (a 100k-step dense verl log is 211 MB: 7 slices). */
const SLICE_BYTES = 32 << 20;
const FIRST_SLICE_BYTES = 4 << 20;

interface Followed {
  id: string;
  target: DashboardTarget;
  source?: MetricsSource;
  /** Draws its charts from the series held here (the page gets only what is on screen). */
  charts?: SeriesCharts;
  /** The series revision and metric names last told to the page. */
  told: string;
  live: boolean;
  error: string | null;
  problemsShown: string;
  /** The share of its log the first read had read, last sent (while that read is under way). */
  loading?: number;
  /** The status line last sent, sent again when the page (re)loads. */
  status?: Extract<ToDashboard, { type: 'status' }>;
}

/**
 * A run dashboard: one webview with the runs' charts. Each run is loaded once, then polled from its last offset while it
 * runs. The series stay here; the page asks for each chart's lines over its visible range and is sent one exact envelope
 * bucket per pixel column (or every value, zoomed in), so it holds only what is on screen.
 */
export function openDashboard(deps: Deps, targets: DashboardTarget[]): void {
  const title = targets.length === 1 ? `Metrics: ${targets[0]!.name ?? basename(targets[0]!.path)}` : `Compare ${targets.length} runs`;
  const dashboard = new Dashboard(deps, targets);
  const panel: TypedWebviewPanel<typeof toDashboard> = openWebviewPanel(deps.ctx, {
    viewType: 'medrl.dashboard',
    title,
    bundle: 'dashboard',
    toWebview: toDashboard,
    fromWebview: fromDashboard,
    retainContextWhenHidden: true,
    onMessage: (msg) => dashboard.onMessage(msg),
  });
  dashboard.post = panel.post;
  panel.panel.onDidDispose(() => dashboard.dispose());
  // Reading starts now, not when the page is ready: a page's first load takes seconds, which the logs' first slices use.
  dashboard.start();
}

/** The runs one dashboard follows, and the loop that polls them while the panel is open. */
class Dashboard {
  private readonly runs: Followed[];
  private disposed = false;
  /** Ends the runs' waits between polls at once when the panel closes. */
  private readonly closed = new AbortController();
  /** The "what changed" message, kept to send again when the page reloads. */
  private provenance: Extract<ToDashboard, { type: 'provenance' }> | undefined;
  /** Each run's change points (resumes that changed its reward or judges), kept to send again when the page reloads. */
  private readonly changePoints: Extract<ToDashboard, { type: 'changePoints' }>[] = [];
  /** The panel's post; set once the panel exists (the page's first message comes after). */
  post: (m: ToDashboard) => void = () => {};
  /** Big logs' parses kept on this machine, as `medrl.metrics.cacheSizeMB` says when the dashboard opens. */
  private readonly cache: MetricsCache | undefined;

  constructor(
    private readonly deps: Deps,
    targets: DashboardTarget[],
  ) {
    this.runs = targets.map((target, i) => ({ id: `r${i}`, target, told: '', live: true, error: null, problemsShown: '' }));
    this.cache = metricsCache(deps.ctx);
  }

  private send(m: ToDashboard): void {
    if (!this.disposed) this.post(m);
  }

  /** Starts reading the runs, and their provenance when they are runs of the Runs view (once, as the panel opens). */
  start(): void {
    for (const r of this.runs) void this.loop(r);
    // Only runs of the Runs view have a record to read provenance by (not metrics files or folders from the explorer).
    if (this.runs.length > 1 && this.runs.every((r) => r.target.record)) void this.compareProvenance();
    for (const r of this.runs) if (r.target.record) void this.sendChangePoints(r);
  }

  async onMessage(msg: FromDashboard): Promise<void> {
    if (msg.type === 'ready') {
      const where = this.runs.map((r) => `${r.target.host}:${r.target.path}`);
      // A run by its id, which is its folder's name too: the same colour from the Runs view and from the Explorer.
      const colours = colourSlots(this.runs.map((r) => r.target.record?.id ?? basename(r.target.path)));
      this.send({
        type: 'runs',
        runs: this.runs.map((r, i) => ({
          id: r.id,
          label: r.target.name ?? basename(r.target.path),
          where: where[i]!,
          colour: colours[i]!,
        })),
      });
      // Everything known so far (the page is new, or was reloaded): it then asks for its charts.
      for (const r of this.runs) {
        if (r.source) this.sendMetrics(r, true);
        if (r.status) this.send(r.status);
        // A page that comes up while a big log is still read says how far it has come at once, not at the next percent.
        else if (r.loading !== undefined) this.send({ type: 'loading', runId: r.id, percent: r.loading });
      }
      if (this.provenance) this.send(this.provenance);
      for (const m of this.changePoints) this.send(m);
    } else if (msg.type === 'view') {
      try {
        this.sendView(msg);
      } catch (err) {
        this.deps.ctx.log.error(`metrics: chart ${msg.chartId}: ${errorMessage(err)}`);
        this.send({ type: 'chart', chartId: msg.chartId, seq: msg.seq, range: null, lines: [], error: errorMessage(err) });
      }
    } else {
      await this.exportCsv(msg);
    }
  }

  /**
   * A chart's lines over the asked range, or over all the lines' steps together (so every run's buckets line up).
   * Runs not loaded yet, or without the metric, are left out; the page asks again when they gain steps.
   */
  private sendView(msg: Extract<FromDashboard, { type: 'view' }>): void {
    const asked = msg.lines.flatMap((l) => {
      const charts = this.runs.find((r) => r.id === l.runId)?.charts;
      return charts ? [{ runId: l.runId, key: l.key, charts }] : [];
    });
    const request = { axis: msg.axis, width: msg.width, smoothing: msg.smoothing };
    let range = msg.range;
    if (!range) {
      for (const a of asked) {
        const e = a.charts.extent(a.key, msg.axis);
        if (e) range = range ? { x0: Math.min(range.x0, e.x0), x1: Math.max(range.x1, e.x1) } : e;
      }
    }
    const lines = asked.flatMap((a) => {
      const v = a.charts.line({ ...request, key: a.key, range });
      if (!v) return [];
      const { extent: _, nonFinite, ...drawn } = v;
      return [
        {
          runId: a.runId,
          ...drawn,
          x: toWire(drawn.x),
          lo: toWire(drawn.lo),
          hi: toWire(drawn.hi),
          y: toWire(drawn.y),
          nonFinite: nonFinite.map((b) => ({ step: b.step, value: toJsonMetric(b.value) })),
        },
      ];
    });
    this.send({ type: 'chart', chartId: msg.chartId, seq: msg.seq, range: range ?? null, lines, error: null });
  }

  private async exportCsv(msg: Extract<FromDashboard, { type: 'exportCsv' }>): Promise<void> {
    const lines = msg.lines.flatMap((l) => {
      const run = this.runs.find((r) => r.id === l.runId);
      if (!run?.charts) return [];
      const label = run.target.name ?? basename(run.target.path);
      return [{ run: label, series: run.charts.series, key: l.key, smoothed: run.charts.smoothedColumn(l.key, msg.smoothing) }];
    });
    const csv = metricsCsv(lines);
    const suggestedName = msg.suggestedName;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(homedir());
    const uri = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(folder, suggestedName),
      filters: { CSV: ['csv'] },
      saveLabel: 'Export CSV',
    });
    if (!uri) return;
    await writeFile(uri.fsPath, csv);
    this.deps.ctx.log.info(`metrics: exported the visible data to ${uri.fsPath}`);
    void vscode.window.showInformationMessage(`MedRL: metrics saved to ${uri.fsPath}`);
  }

  /**
   * What each run was made with differently from the earliest one compared (the baseline, whatever order the runs were
   * picked or selected in), read once from the hosts.
   */
  private async compareProvenance(): Promise<void> {
    const read = async (r: Followed): Promise<RunProvenance | Error> => {
      const { host, record } = r.target;
      if (host !== 'local' && !vscode.workspace.isTrusted) return new Error(`not connecting to ${host}: the workspace is not trusted`);
      try {
        return await this.deps.runProvenances.get({ host, record: record! });
      } catch (err) {
        // RunProvenances logged it; the strip says it in the run's place.
        return err instanceof Error ? err : new Error(String(err));
      }
    };
    const runs = [...this.runs].sort((x, y) => x.target.record!.created.localeCompare(y.target.record!.created));
    const results = await Promise.all(runs.map(read));
    // Run ids, as `medrl runs diff` takes them: runs of one spec share their name.
    const label = (i: number) => runs[i]!.target.record!.id;
    const base = results[0]!;
    this.provenance = {
      type: 'provenance',
      baselineLabel: label(0),
      comparisons: results.slice(1).map((p, k) => {
        const i = k + 1;
        const runId = runs[i]!.id;
        const common = { runId, label: label(i) };
        if (base instanceof Error || p instanceof Error) {
          const failed = [
            base instanceof Error ? `${label(0)}: ${base.message}` : '',
            p instanceof Error ? `${label(i)}: ${p.message}` : '',
          ];
          return { ...common, differences: [], notes: [], error: failed.filter(Boolean).join('; ') };
        }
        const notes = [base.note ? `${label(0)}: ${base.note}` : '', p.note ? `${label(i)}: ${p.note}` : ''].filter(Boolean);
        const differences = diffProvenance(base, p).map((d) => ({ path: d.path, a: valueText(d.a), b: valueText(d.b), diff: d.diff }));
        return { ...common, differences, notes, error: null };
      }),
    };
    this.send(this.provenance);
  }

  /** Where the run's reward or judges changed along the runs it resumed from (read on its host), for the charts' markers. */
  private async sendChangePoints(r: Followed): Promise<void> {
    const { host, record } = r.target;
    if (host !== 'local' && !vscode.workspace.isTrusted) return; // the status line already says it does not connect
    let message: Extract<ToDashboard, { type: 'changePoints' }>;
    try {
      const p = await this.deps.runProvenances.get({ host, record: record! });
      const changes = await resumeChanges(p, (run) => this.deps.runProvenances.getFolder(host, run));
      message = {
        type: 'changePoints',
        runId: r.id,
        points: changes.points.map((c) => ({ step: c.step, what: c.what, text: changePointText(c) })),
        notes: changes.notes,
      };
    } catch (err) {
      // RunProvenances logged it; the page says it beside the run's other notes.
      message = {
        type: 'changePoints',
        runId: r.id,
        points: [],
        notes: [`what changed along its resumes cannot be read: ${errorMessage(err)}`],
      };
    }
    if (!message.points.length && !message.notes.length) return;
    this.changePoints.push(message);
    this.send(message);
  }

  /** The run's metric names and step count, when a poll changed them (or `always`: the page was reloaded). */
  private sendMetrics(r: Followed, always = false): void {
    const series = r.source!.series;
    const told = `${series.revision}`;
    if (told === r.told && !always) return;
    r.told = told;
    this.send({
      type: 'metrics',
      runId: r.id,
      framework: r.source!.framework ?? null,
      names: series.metricNames(),
      steps: series.length,
      revision: series.revision,
    });
  }

  private async pollOne(r: Followed, first: boolean): Promise<void> {
    try {
      if (!r.source) {
        if (r.target.host !== 'local' && !vscode.workspace.isTrusted)
          throw new Error(`not connecting to ${r.target.host}: the workspace is not trusted`);
        const host = await this.deps.pool.get(r.target.host);
        r.source = await openMetricsSource(host, r.target.path, { framework: r.target.framework, cache: this.cache });
        r.charts = new SeriesCharts(r.source.series);
      }
      const src = r.source;
      const ended = src.ended ? await src.ended() : false;
      // Steps read after the first load are stamped with the time they were seen (wall time for logs without timings).
      // A big log is read in slices, each drawn as it comes: the charts fill in while the rest is read.
      // The first slice is small: ten runs read side by side each show their first steps within a second or so.
      // Closing the panel stops a read under way (and a parse on a worker thread for this run's log).
      const signal = this.closed.signal;
      // The first read of a big log says how far it has come (the run's chip shows it until the status below).
      const onRead = first ? (read: number, size: number) => this.sendLoading(r, read, size) : undefined;
      for (
        let slice = FIRST_SLICE_BYTES;
        (await src.poll({ live: !first, final: ended, maxBytes: slice, signal, onRead })).more && !this.disposed;
      ) {
        this.sendMetrics(r);
        slice = SLICE_BYTES;
      }
      if (ended) r.live = false;
      // A run back after an error (a dropped connection) is said to be so, whatever else changed.
      const recovered = r.error !== null;
      r.error = null;
      this.sendMetrics(r);
      await this.sendStatus(r, src, first || recovered);
    } catch (err) {
      if (this.disposed) return; // the panel closed: its reads were stopped, nothing to show
      const message = errorMessage(err);
      if (message !== r.error) this.deps.ctx.log.error(`metrics: ${r.target.host}:${r.target.path}: ${message}`);
      r.error = message;
      r.status = {
        type: 'status',
        runId: r.id,
        framework: r.source?.framework ?? null,
        source: r.source?.source ?? null,
        live: r.live,
        error: message,
        problems: [],
        notes: [],
      };
      this.send(r.status);
    }
  }

  /** How far a run's first read has come, when its percent changed. */
  private sendLoading(r: Followed, read: number, size: number): void {
    const percent = Math.min(100, Math.floor((100 * read) / Math.max(1, size)));
    if (percent === r.loading) return;
    r.loading = percent;
    this.send({ type: 'loading', runId: r.id, percent });
  }

  /** A run's status line, its problems and notes; sent when any of it changed (a note's count grows as the run goes on). */
  private async sendStatus(r: Followed, src: MetricsSource, first: boolean): Promise<void> {
    const problems = (await src.problems()).slice(0, 50).map(formatProblem);
    const notes = src.notes();
    const shown = [...notes, ...problems].join('\n');
    if (shown !== r.problemsShown || first || !r.live) {
      r.problemsShown = shown;
      r.status = {
        type: 'status',
        runId: r.id,
        framework: src.framework ?? null,
        source: src.source ?? null,
        live: r.live,
        error: null,
        problems,
        notes,
      };
      this.send(r.status);
    }
  }

  /** Each run polled on its own cycle: a silent host (a poll waits out its keepalive) holds up only its own run. */
  private async loop(r: Followed): Promise<void> {
    let first = true;
    while (!this.disposed && r.live) {
      await this.pollOne(r, first);
      first = false;
      if (!r.live) return;
      try {
        await sleep(POLL_MS, undefined, { signal: this.closed.signal });
      } catch (err) {
        if (this.closed.signal.aborted) return; // the panel closed while waiting
        throw err;
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.closed.abort();
  }
}

function basename(p: string): string {
  const parts = p.replace(/\/+$/, '').split('/');
  return parts[parts.length - 1] || p;
}
