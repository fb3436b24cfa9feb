import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { el } from '../shared/vscode-api';
import type { StepInfoMsg } from '../../src/protocol/replay';
import { fmtScore, fmtShare } from './format';

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/** The steps of the open collection: a chart of mean score and warning shares per step, and a chip per step to pick one. */
export class Timeline {
  readonly root = el('div', { className: 'timeline' });
  private readonly chartBox = el('div', { className: 'timeline-chart' });
  private readonly chips = el('div', { className: 'timeline-chips' });
  private plot: uPlot | undefined;
  private steps: StepInfoMsg[] = [];

  constructor(private readonly onPick: (step: number) => void) {
    this.chips.setAttribute('role', 'tablist');
    this.chips.setAttribute('aria-label', 'Steps');
    this.root.append(this.chartBox, this.chips);
  }

  update(steps: StepInfoMsg[], selected: number | undefined): void {
    this.steps = steps;
    this.chips.replaceChildren(
      ...steps.map((s) => {
        const mean = s.signals?.meanScore;
        const chip = el('button', {
          className: `chip ${s.step === selected ? 'selected' : ''} ${s.indexed ? '' : 'pending'}`,
          text: `${s.step}`,
          title: `step ${s.step}: ${s.indexed ? `${s.episodes} episodes, mean score ${fmtScore(mean)}` : 'indexing…'}${s.malformed.length ? `, ${s.malformed.length} malformed line(s)` : ''}`,
        });
        chip.dataset.step = String(s.step);
        chip.setAttribute('role', 'tab');
        if (mean !== null && mean !== undefined) chip.style.setProperty('--fill', `${Math.round(Math.max(0, Math.min(1, mean)) * 100)}%`);
        chip.addEventListener('click', () => this.onPick(s.step));
        return chip;
      }),
    );
    this.chart();
  }

  private chart(): void {
    const done = this.steps.filter((s) => s.signals);
    if (done.length < 2) {
      this.plot?.destroy();
      this.plot = undefined;
      this.chartBox.replaceChildren(
        el('div', { className: 'muted', text: done.length ? 'one step indexed: the chart needs two' : 'indexing steps…' }),
      );
      return;
    }
    const data: uPlot.AlignedData = [
      done.map((s) => s.step),
      done.map((s) => s.signals!.meanScore),
      done.map((s) => s.signals!.flatGroupShare),
      done.map((s) => (s.signals!.episodes ? s.signals!.truncated / s.signals!.episodes : null)),
    ];
    const fg = cssVar('--vscode-foreground', '#ccc');
    const grid = cssVar('--vscode-editorWidget-border', '#444');
    const opts: uPlot.Options = {
      width: Math.max(300, this.chartBox.clientWidth || 600),
      height: 120,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      axes: [
        { stroke: fg, grid: { stroke: grid }, label: 'step' },
        { stroke: fg, grid: { stroke: grid } },
      ],
      scales: { x: { time: false } },
      series: [
        { label: 'step' },
        { label: 'mean score', stroke: cssVar('--vscode-charts-blue', '#3794ff'), width: 2, value: (_u, v) => fmtScore(v) },
        { label: 'flat groups', stroke: cssVar('--vscode-charts-orange', '#d18616'), value: (_u, v) => fmtShare(v) },
        { label: 'truncated', stroke: cssVar('--vscode-charts-red', '#f14c4c'), value: (_u, v) => fmtShare(v) },
      ],
    };
    this.plot?.destroy();
    this.chartBox.replaceChildren();
    this.plot = new uPlot(opts, data, this.chartBox);
    const plot = this.plot;
    plot.over.addEventListener('click', () => {
      const i = plot.cursor.idx;
      if (i !== null && i !== undefined) this.onPick(done[i]!.step);
    });
  }
}

/** The reward-hacking and learning-signal checks of the selected step, each saying how it was decided. */
export function signalsPanel(s: StepInfoMsg | undefined): HTMLElement {
  const box = el('div', { className: 'signals' });
  if (!s?.signals) {
    box.append(el('span', { className: 'muted', text: s ? `step ${s.step}: indexing…` : '' }));
    return box;
  }
  const g = s.signals;
  const n = g.episodes || 1;
  const card = (label: string, value: string, title: string, warn = false) =>
    el(
      'div',
      { className: `signal ${warn ? 'warn' : ''}`, title },
      el('div', { className: 'signal-value', text: value }),
      el('div', { className: 'signal-label', text: label }),
    );
  box.append(
    card('episodes', String(g.episodes), `${g.scored} with a score`),
    card('mean score', fmtScore(g.meanScore), 'mean of the scores of this step'),
    card(
      'flat groups',
      `${fmtShare(g.flatGroupShare)} (${g.flatGroups}/${g.groups})`,
      'groups of two or more responses whose scores are all equal: GRPO gets no learning signal from them',
      (g.flatGroupShare ?? 0) > 0.5,
    ),
    card(
      'score ~ length',
      g.scoreLengthCorrelation === null ? '–' : `r = ${g.scoreLengthCorrelation.toFixed(2)}`,
      'Pearson correlation of score and response length (characters): strongly positive hints at length hacking',
      (g.scoreLengthCorrelation ?? 0) > 0.5,
    ),
    card('empty', `${fmtShare(g.empty / n)} (${g.empty})`, 'responses with no text', g.empty > 0),
    card(
      'truncated',
      `${fmtShare(g.truncated / n)} (${g.truncated})`,
      `unclosed <think>/<answer>/<tool_call>: ${g.unclosed}; no end-of-turn token (only when special tokens were kept): ${g.noEos}; at the length cap (within 3% of the longest response, shared by 2+): ${g.atLengthCap}`,
      g.truncated > 0,
    ),
    el('div', {
      className: 'signal-how muted',
      text: `truncated = unclosed tag ${g.unclosed} · no EOS ${g.noEos} · at length cap ${g.atLengthCap}`,
    }),
  );
  if (s.malformed.length)
    box.append(
      el('div', {
        className: 'signal warn malformed',
        title: s.malformed.map((m) => `${m.file}:${m.line ?? m.row}: ${m.message}`).join('\n'),
        text: `${s.malformed.length} malformed line(s): ${s.malformed
          .slice(0, 3)
          .map((m) => `line ${m.line ?? m.row}: ${m.message}`)
          .join('; ')}`,
      }),
    );
  return box;
}
