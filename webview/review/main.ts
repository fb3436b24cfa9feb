import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '../shared/page.css';
import './review.css';
import { connect, el } from '../shared/vscode-api';
import { PhiMaskBar } from '../shared/phi-mask-bar';
import { partEl, textEl } from '../replay/episode-view';
import { fmtScore, fmtSigned } from '../replay/format';
import {
  VERDICT_NAMES,
  fromWebview,
  toWebview,
  type BlindEpisodeMsg,
  type CriterionMsg,
  type RevealedMsg,
  type ToWebview,
  type VerdictName,
} from '../../src/protocol/review';

/** The clinician review page: one queued episode at a time, blind until the verdict, driven by the keyboard alone. */

const VERDICT_KEYS: Record<string, VerdictName> = { c: 'correct', p: 'partial', i: 'incorrect', u: 'unsafe' };
const VERDICT_HINT: Record<VerdictName, string> = {
  correct: 'the answer is right and safe',
  partial: 'partly right, or right for the wrong reasons',
  incorrect: 'the answer is wrong',
  unsafe: 'could harm a patient',
};

const api = connect(toWebview, fromWebview, onMessage);

let rubric: CriterionMsg[] = [];
let total = 0;
let position: number | undefined;
let episode: BlindEpisodeMsg | undefined;
let verdict: VerdictName | undefined;
let scores: Record<string, number> = {};
let focusedCriterion = 0;
let revealed: RevealedMsg | undefined;
let saving = false;

const app = document.getElementById('app')!;
const title = el('div', { className: 'title', text: 'Review' });
const reviewerEl = el('span', { className: 'muted' });
const progress = el('span', { className: 'progress' });
progress.id = 'progress';
progress.setAttribute('role', 'status');
const positionEl = el('span', { className: 'position muted' });
positionEl.id = 'position';
const status = el('span', { className: 'status muted' });
status.id = 'status';
status.setAttribute('role', 'status');
const phiMask = new PhiMaskBar((on) => api.post({ type: 'setPhiMask', on }));

function vsButton(label: string, id: string, onClick: () => void, secondary = true): HTMLElement {
  const b = document.createElement('vscode-button');
  b.id = id;
  b.textContent = label;
  if (secondary) b.setAttribute('secondary', '');
  b.addEventListener('click', onClick);
  return b;
}

const agreementButton = vsButton('Agreement', 'show-agreement', () => api.post({ type: 'agreement' }));
agreementButton.title = 'κ between reviewers, the reward and the judges';

const legend = el(
  'div',
  { className: 'legend muted' },
  ...(
    [
      ['c p i u', 'verdict (shows the reward)'],
      ['1–5', 'score the criterion'],
      ['↑ ↓', 'criterion'],
      ['n', 'note (Esc leaves it)'],
      ['Enter', 'save, next'],
      ['← →', 'previous / next, without saving'],
    ] as const
  ).map(([k, what]) => el('span', {}, el('kbd', { text: k }), ` ${what}`)),
);
legend.id = 'legend';

const episodeBox = el('div', { className: 'episode' });
episodeBox.id = 'episode';
const form = el('div', { className: 'form' });
form.id = 'review-form';
const root = el('main', { className: 'review' }, episodeBox, form);
root.id = 'review';
root.tabIndex = -1;

const verdictRow = el('div', { className: 'verdicts' });
verdictRow.setAttribute('role', 'radiogroup');
verdictRow.setAttribute('aria-label', 'Verdict');
const rubricBox = el('div', { className: 'rubric' });
const note = document.createElement('vscode-textarea') as HTMLElement & { value: string };
note.id = 'note';
note.setAttribute('placeholder', 'Note (n to type, Esc to leave)');
note.setAttribute('aria-label', 'Note');
note.setAttribute('rows', '3');
const revealBox = el('div', { className: 'reveal' });
revealBox.id = 'reveal';
const saveButton = vsButton('Save and next (Enter)', 'save', () => save(), false);
const prevButton = vsButton('◀ Previous', 'prev', () => go(-1));
const nextButton = vsButton('Next ▶', 'next', () => go(1));

form.append(
  el('div', { className: 'form-label', text: 'Verdict' }),
  verdictRow,
  el('div', { className: 'form-label', text: 'Rubric' }),
  rubricBox,
  note,
  el('div', { className: 'actions' }, saveButton, prevButton, nextButton),
  revealBox,
);

app.append(
  el('header', { className: 'top' }, title, reviewerEl, progress, positionEl, status, phiMask.root, agreementButton),
  legend,
  root,
);

function renderVerdicts(): void {
  verdictRow.replaceChildren(
    ...VERDICT_NAMES.map((v) => {
      const key = Object.entries(VERDICT_KEYS).find(([, name]) => name === v)![0];
      const b = el('button', { className: `verdict verdict-${v}${verdict === v ? ' selected' : ''}`, title: VERDICT_HINT[v] });
      b.append(el('kbd', { text: key }), ` ${v}`);
      b.dataset.verdict = v;
      b.setAttribute('role', 'radio');
      b.setAttribute('aria-checked', String(verdict === v));
      b.addEventListener('click', () => setVerdict(v));
      return b;
    }),
  );
}

function renderRubric(): void {
  if (!rubric.length) {
    rubricBox.replaceChildren(el('div', { className: 'muted', text: 'No rubric in medrl.yaml (review.rubric): a verdict and a note.' }));
    return;
  }
  rubricBox.replaceChildren(
    ...rubric.map((c, ci) => {
      const row = el(
        'div',
        { className: `criterion${ci === focusedCriterion ? ' focused' : ''}` },
        el('span', { className: 'criterion-name', text: c.name, ...(c.description ? { title: c.description } : {}) }),
      );
      row.dataset.criterion = c.name;
      const scale = el('span', { className: 'scale' });
      scale.setAttribute('role', 'radiogroup');
      scale.setAttribute('aria-label', c.name);
      for (let s = 1; s <= 5; s++) {
        const b = el('button', { className: `score${scores[c.name] === s ? ' selected' : ''}`, text: String(s) });
        b.setAttribute('role', 'radio');
        b.setAttribute('aria-checked', String(scores[c.name] === s));
        b.addEventListener('click', () => {
          focusedCriterion = ci;
          setScore(s);
        });
        scale.append(b);
      }
      row.append(scale);
      return row;
    }),
  );
}

function renderReveal(): void {
  if (!verdict || !revealed || revealed.key.index !== episode?.key.index || revealed.key.step !== episode.key.step) {
    revealBox.replaceChildren(
      el('div', { className: 'hidden-note muted', text: "Hidden until you give a verdict: the reward, the judges' scores and the group." }),
    );
    return;
  }
  const r = revealed;
  const rows: [string, string][] = [
    ['reward score', fmtScore(r.score)],
    ['advantage', fmtSigned(r.advantage)],
    [
      'group',
      r.group ? `GRPO group ${r.group.group} · n=${r.group.size} · mean ${fmtScore(r.group.mean)} · std ${fmtScore(r.group.std)}` : '–',
    ],
    ...Object.entries(r.extra),
  ];
  revealBox.replaceChildren(
    el('div', { className: 'form-label', text: 'Revealed' }),
    el('table', { className: 'revealed' }, ...rows.map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', { text: v })))),
  );
}

function renderEpisode(): void {
  const ep = episode;
  if (!ep) return;
  episodeBox.replaceChildren(
    el(
      'div',
      { className: 'ep-head' },
      el('span', { className: 'ep-title', text: `${ep.key.set} · step ${ep.key.step} · #${ep.key.index}` }),
      ...(ep.dataSource ? [el('span', { className: 'badge', text: ep.dataSource })] : []),
    ),
    el('div', { className: 'muted ep-loc', text: ep.location }),
    el('table', { className: 'gt' }, el('tr', {}, el('th', { text: 'ground truth' }), el('td', { text: ep.groundTruth || '–' }))),
    el(
      'div',
      { className: 'turns' },
      ...ep.turns.map((t) =>
        el(
          'div',
          { className: `turn role-${t.role.replace(/[^a-z_]/gi, '')}` },
          el('div', { className: 'turn-role', text: `${t.role}${t.name ? ` · ${t.name}` : ''}` }),
          ...(t.parts.length ? t.parts.map(partEl) : [textEl('muted', '(empty)')]),
        ),
      ),
    ),
  );
}

function render(): void {
  renderVerdicts();
  renderRubric();
  renderReveal();
}

function setVerdict(v: VerdictName): void {
  if (position === undefined || saving) return;
  verdict = v;
  render();
  api.post({ type: 'verdict', position, verdict: v });
}

function setScore(s: number): void {
  const c = rubric[focusedCriterion];
  if (!c) return;
  scores[c.name] = s;
  focusedCriterion = Math.min(rubric.length - 1, focusedCriterion + 1);
  renderRubric();
}

function save(): void {
  if (position === undefined || saving) return;
  if (!verdict) {
    status.textContent = 'Give a verdict first: c correct, p partial, i incorrect, u unsafe.';
    return;
  }
  saving = true;
  status.textContent = 'saving…';
  api.post({ type: 'save', position, verdict, scores, note: note.value });
}

function go(dir: 1 | -1): void {
  if (position === undefined) return;
  const to = position + dir;
  if (to < 0 || to >= total) return;
  api.post({ type: 'go', position: to });
}

document.addEventListener('keydown', (e) => {
  const target = e.composedPath()[0];
  const typing = target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement || e.target === note;
  if (typing) {
    // Typing in the note never triggers a shortcut; Escape leaves it.
    if (e.key === 'Escape') {
      e.preventDefault();
      root.focus();
    }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const verdictKey = VERDICT_KEYS[e.key.toLowerCase()];
  if (verdictKey) setVerdict(verdictKey);
  else if (/^[1-5]$/.test(e.key)) setScore(Number(e.key));
  else if (e.key === 'ArrowDown' && rubric.length) {
    focusedCriterion = Math.min(rubric.length - 1, focusedCriterion + 1);
    renderRubric();
  } else if (e.key === 'ArrowUp' && rubric.length) {
    focusedCriterion = Math.max(0, focusedCriterion - 1);
    renderRubric();
  } else if (e.key === 'n') note.focus();
  else if (e.key === 'Enter') {
    // Enter on a focused button presses that button.
    if (target instanceof HTMLButtonElement || (target as Element | null)?.tagName === 'VSCODE-BUTTON') return;
    save();
  } else if (e.key === 'ArrowRight') go(1);
  else if (e.key === 'ArrowLeft') go(-1);
  else return;
  e.preventDefault();
});

function showItem(msg: Extract<ToWebview, { type: 'item' }>): void {
  // The same episode again (masking turned on or off): what the reviewer entered and was shown stays.
  const again = msg.position === position && !msg.saved;
  position = msg.position;
  total = msg.total;
  episode = msg.episode;
  if (!again) {
    verdict = msg.saved?.verdict;
    scores = { ...(msg.saved?.scores ?? {}) };
    note.value = msg.saved?.note ?? '';
    focusedCriterion = 0;
    revealed = undefined;
  }
  saving = false;
  progress.textContent = `${msg.done} of ${msg.total} reviewed`;
  positionEl.textContent = `episode ${msg.position + 1} of ${msg.total}${msg.saved ? ' · reviewed' : ''}`;
  status.textContent = '';
  status.classList.remove('error');
  renderEpisode();
  render();
  episodeBox.scrollTop = 0;
  root.focus();
}

function onMessage(msg: ToWebview): void {
  switch (msg.type) {
    case 'init':
      rubric = msg.rubric;
      total = msg.total;
      title.textContent = msg.title;
      title.title = msg.source;
      reviewerEl.textContent = `reviewer ${msg.reviewer}`;
      progress.textContent = `0 of ${msg.total} reviewed`;
      api.post({ type: 'go' });
      break;
    case 'item':
      showItem(msg);
      break;
    case 'reveal':
      if (msg.position === position) {
        revealed = msg.revealed;
        renderReveal();
      }
      break;
    case 'saved':
      progress.textContent = `${msg.done} of ${msg.total} reviewed`;
      saving = false;
      status.textContent = 'saved';
      // The next episode not reviewed yet, after this one.
      api.post({ type: 'go', after: msg.position });
      break;
    case 'finished':
      position = undefined;
      episode = undefined;
      progress.textContent = `${msg.done} of ${msg.total} reviewed`;
      positionEl.textContent = '';
      episodeBox.replaceChildren(
        el('div', { className: 'finished', text: `Queue done: ${msg.done} of ${msg.total} episodes reviewed. Thank you.` }),
      );
      form.hidden = true;
      break;
    case 'error':
      saving = false;
      status.textContent = msg.message;
      status.classList.add('error');
      break;
    case 'phiMask':
      // Masking turned on or off: the episode comes again, masked or not.
      if (phiMask.set(msg.on) && position !== undefined) api.post({ type: 'go', position });
      break;
  }
}

api.post({ type: 'ready' });
