import '../shared/transcript.css';
import { el } from '../shared/vscode-api';
import { setBreakableText } from '../shared/breakable-text';
import type { CompareViewMsg, EpisodeViewMsg } from '../../src/protocol/replay';
import { fmtScore, fmtSigned, signOf } from './format';

type Part = EpisodeViewMsg['turns'][number]['parts'][number];

const PART_LABEL: Record<Part['kind'], string> = { text: '', think: 'thinking', tool_call: 'tool call', tool_response: 'tool result' };

function prettyJson(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s; // not JSON: shown as written
  }
}

/** Beyond this many characters a text shows its start and a button for the rest (laying out megabytes takes seconds). */
const SHOWN = 20_000;

/** Text as text only (model output is untrusted: it is never parsed as HTML); a huge one is expanded on request. */
export function textEl(className: string, text: string, tag: 'div' | 'pre' = 'div'): HTMLElement {
  const body = el(tag, { className });
  setBreakableText(body, text.length > SHOWN ? text.slice(0, SHOWN) : text);
  if (text.length > SHOWN) {
    const more = el('button', { className: 'show-all', text: `Show all ${text.length.toLocaleString('en')} characters` });
    more.addEventListener('click', () => {
      setBreakableText(body, text);
      more.remove();
    });
    return el('div', {}, body, more);
  }
  return body;
}

export function partEl(p: Part): HTMLElement {
  const body = textEl('part-text', p.kind === 'tool_call' ? prettyJson(p.text) : p.text);
  const box = el('div', { className: `part part-${p.kind}` });
  if (p.kind !== 'text')
    box.append(el('div', { className: 'part-label', text: PART_LABEL[p.kind] + (p.unclosed ? ' (cut off: never closed)' : '') }));
  box.append(body);
  return box;
}

interface EpisodeHandlers {
  openIndex(index: number): void;
  compare(): void;
  sendToPlayground(): void;
}

/** The episode pane: header, GRPO group, ground truth and reward breakdown, turns (with replay), raw text, comparison. */
export class EpisodeView {
  readonly root = el('div', { className: 'episode' });
  private episode: EpisodeViewMsg | undefined;
  private replay = false;
  private revealed = 0;
  private raw = false;

  constructor(private readonly h: EpisodeHandlers) {
    this.root.tabIndex = 0;
    this.root.addEventListener('keydown', (e) => {
      if (!this.episode || e.target instanceof HTMLInputElement) return;
      if (e.key === 'ArrowRight' || e.key === 'n' || e.key === 'j') this.step(1);
      else if (e.key === 'ArrowLeft' || e.key === 'p' || e.key === 'k') this.step(-1);
      else return;
      e.preventDefault();
    });
    this.root.append(el('div', { className: 'muted empty-note', text: 'Select an episode.' }));
  }

  show(ep: EpisodeViewMsg): void {
    const same =
      this.episode && this.episode.collection === ep.collection && this.episode.step === ep.step && this.episode.index === ep.index;
    this.episode = ep;
    if (!same) this.revealed = this.replay ? 1 : ep.turns.length;
    this.render();
  }

  /** Reveals the next (or hides the last) turn in replay mode; outside it, starts replay. */
  step(dir: 1 | -1): void {
    if (!this.episode) return;
    if (!this.replay) {
      this.replay = true;
      this.revealed = 1;
    } else {
      this.revealed = Math.max(1, Math.min(this.episode.turns.length, this.revealed + dir));
    }
    this.render();
    this.root.querySelector('.turn:last-of-type')?.scrollIntoView({ block: 'nearest' });
  }

  private button(label: string, id: string, onClick: () => void, title?: string): HTMLElement {
    const b = document.createElement('vscode-button');
    b.id = id;
    b.textContent = label;
    b.setAttribute('secondary', '');
    if (title) b.title = title;
    b.addEventListener('click', onClick);
    return b;
  }

  private render(): void {
    const ep = this.episode;
    if (!ep) return;
    const head = el(
      'div',
      { className: 'ep-head' },
      el('span', { className: 'ep-title', text: `${ep.collection} · step ${ep.step} · #${ep.index}` }),
      el('span', { className: `ep-score ${ep.score !== null && ep.score > 0 ? 'pos' : 'zero'}`, text: `score ${fmtScore(ep.score)}` }),
      el('span', { className: 'ep-adv', text: `advantage ${signOf(ep.advantage)} ${fmtSigned(ep.advantage)}` }),
      ...(ep.dataSource ? [el('span', { className: 'badge', text: ep.dataSource })] : []),
      ...ep.flags.map((f) => el('span', { className: 'badge warn', text: f })),
    );
    const loc = el('div', { className: 'muted ep-loc', text: ep.location });
    const tools = el(
      'div',
      { className: 'ep-tools' },
      this.button(
        this.replay ? 'Show all turns' : 'Replay',
        'replay-toggle',
        () => {
          this.replay = !this.replay;
          this.revealed = this.replay ? 1 : ep.turns.length;
          this.render();
        },
        'reveal the turns one by one (→ / n next, ← / p previous)',
      ),
      this.button('◀ Previous turn', 'turn-prev', () => this.step(-1)),
      this.button('Next turn ▶', 'turn-next', () => this.step(1)),
      el('span', {
        className: 'turn-counter',
        text: this.replay ? `turn ${this.revealed} / ${ep.turns.length}` : `${ep.turns.length} turns`,
      }),
      this.button(
        this.raw ? 'Turns' : 'Raw text',
        'raw-toggle',
        () => {
          this.raw = !this.raw;
          this.render();
        },
        'the prompt and response exactly as the trainer wrote them',
      ),
      this.button('Compare across steps', 'compare', () => this.h.compare(), 'this prompt at every step where it appears'),
      this.button('Send to reward playground', 'send-one', () => this.h.sendToPlayground()),
    );
    const group =
      ep.group && ep.group.size > 1
        ? el(
            'div',
            { className: 'group' },
            el('span', {
              className: 'group-title',
              text: `GRPO group ${ep.group.group} · n=${ep.group.size} · mean ${fmtScore(ep.group.mean)} · std ${fmtScore(ep.group.std)} · min ${fmtScore(ep.group.min)} · max ${fmtScore(ep.group.max)}${ep.group.std === 0 ? ' · all equal: no learning signal' : ''}`,
            }),
            el(
              'div',
              { className: 'group-members' },
              ...ep.group.members.map((m) => {
                const chip = el('button', {
                  className: `member ${m.index === ep.index ? 'current' : ''} sign-${signOf(m.advantage) === '+' ? 'pos' : signOf(m.advantage) === '−' ? 'neg' : 'zero'}`,
                  text: `#${m.index} ${fmtScore(m.score)} ${signOf(m.advantage)}`,
                  title: `advantage ${fmtSigned(m.advantage)}`,
                });
                chip.addEventListener('click', () => this.h.openIndex(m.index));
                return chip;
              }),
            ),
          )
        : el('div', { className: 'muted', text: 'no GRPO group (a single response to this prompt in this step)' });
    const breakdown = el(
      'table',
      { className: 'breakdown' },
      el('tr', {}, el('th', { text: 'ground truth' }), el('td', { className: 'gt', text: ep.groundTruth || '–' })),
      el('tr', {}, el('th', { text: 'score' }), el('td', { text: fmtScore(ep.score) })),
      ...Object.entries(ep.extra).map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', { text: v }))),
    );
    const body = this.raw
      ? el(
          'div',
          { className: 'raw' },
          el('div', { className: 'part-label', text: 'prompt (raw)' }),
          textEl('raw-text', ep.raw.prompt, 'pre'),
          el('div', { className: 'part-label', text: 'response (raw)' }),
          textEl('raw-text', ep.raw.response, 'pre'),
        )
      : el(
          'div',
          { className: 'turns' },
          ...ep.turns.slice(0, this.revealed).map((t, i) =>
            el(
              'div',
              { className: `turn role-${t.role.replace(/[^a-z_]/gi, '')}${t.environment ? ' environment' : ''}` },
              el('div', {
                className: 'turn-role',
                // A tool's answer is always the environment's; a user turn says so when it is.
                text: `${t.role}${t.name ? ` · ${t.name}` : ''}${t.environment && t.role !== 'tool' ? ' · environment' : ''}`,
                title: t.environment
                  ? `turn ${i + 1}: written by the environment (a tool, a simulator or the opponent), masked out of the loss`
                  : `turn ${i + 1}`,
              }),
              ...(t.parts.length ? t.parts.map(partEl) : [el('div', { className: 'muted', text: '(empty)' })]),
            ),
          ),
        );
    this.root.replaceChildren(head, loc, tools, group, breakdown, body);
  }

  showCompare(c: CompareViewMsg): void {
    const back = this.button('Back to the episode', 'compare-back', () => this.render());
    const cols = c.steps.map((s) =>
      el(
        'div',
        { className: `cmp-col ${s.step === c.step ? 'current' : ''}` },
        el('div', { className: 'cmp-step', text: `step ${s.step}` }),
        ...s.episodes.map((e) =>
          el(
            'div',
            { className: 'cmp-ep' },
            el('div', {
              className: 'cmp-score',
              text: `#${e.index} · score ${fmtScore(e.score)} · ${signOf(e.advantage)}${e.flags.length ? ` · ${e.flags.join(', ')}` : ''}`,
            }),
            el('div', { className: 'part-text', text: e.response }),
          ),
        ),
      ),
    );
    this.root.replaceChildren(
      el(
        'div',
        { className: 'ep-head' },
        el('span', { className: 'ep-title', text: `Same prompt across ${c.steps.length} step(s) of ${c.collection}` }),
        back,
      ),
      el('div', { className: 'cmp-prompt part-text', text: c.prompt }),
      ...(c.pendingSteps ? [el('div', { className: 'muted', text: `${c.pendingSteps} step(s) still being indexed` })] : []),
      el('div', { className: 'cmp-cols' }, ...cols),
    );
  }
}
