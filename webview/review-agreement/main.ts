import '@vscode-elements/elements/dist/vscode-button/index.js';
import '../shared/page.css';
import './agreement.css';
import { connect, el } from '../shared/vscode-api';
import { fromWebview, toWebview, type AgreementMsg, type EpisodeKeyMsg, type ToWebview } from '../../src/protocol/review-agreement';

/** κ between reviewers, the reward and judges; each disagreement one click from its episode in the replay. */

const api = connect(toWebview, fromWebview, onMessage);
const app = document.getElementById('app')!;
const title = el('div', { className: 'title', text: 'Review agreement' });
const status = el('span', { className: 'status muted', text: 'loading…' });
status.setAttribute('role', 'status');
const refresh = document.createElement('vscode-button');
refresh.id = 'refresh';
refresh.textContent = 'Refresh';
refresh.setAttribute('secondary', '');
refresh.addEventListener('click', () => api.post({ type: 'refresh' }));
const body = el('main', { className: 'body' });
app.append(el('header', { className: 'top' }, title, status, refresh), body);

function fmtKappa(k: number | null): string {
  return k === null ? '–' : k.toFixed(2);
}

function fmtShare(v: number | null): string {
  return v === null ? '–' : `${(v * 100).toFixed(0)}%`;
}

function episodeLink(k: EpisodeKeyMsg): HTMLElement {
  const b = el('button', {
    className: 'episode-link',
    text: `${k.set} · step ${k.step} · #${k.index}`,
    title: 'Open in the episode replay',
  });
  b.addEventListener('click', () => api.post({ type: 'openEpisode', episode: k }));
  return b;
}

function confusionTable(p: AgreementMsg['pairs'][number]): HTMLElement {
  const c = p.confusion;
  return el(
    'table',
    { className: 'confusion' },
    el('tr', {}, el('th', { text: '' }), el('th', { text: `${p.b}: pass` }), el('th', { text: `${p.b}: fail` })),
    el('tr', {}, el('th', { text: `${p.a}: pass` }), el('td', { text: String(c.pp) }), el('td', { text: String(c.pf) })),
    el('tr', {}, el('th', { text: `${p.a}: fail` }), el('td', { text: String(c.fp) }), el('td', { text: String(c.ff) })),
  );
}

function render(a: AgreementMsg): void {
  const reviewers = Object.entries(a.reviewers);
  const summary = el(
    'p',
    { className: 'summary' },
    reviewers.length
      ? `${reviewers.map(([r, n]) => `${r} (${n})`).join(', ')}. A reviewer's pass is the verdict "correct"; the reward passes at ≥ ${a.threshold}.`
      : 'No reviews yet: run MedRL: Review Episodes… first.',
  );
  const notes: string[] = [];
  if (a.stale) notes.push(`${a.stale} review(s) of episodes whose text changed since are left out.`);
  if (a.malformed) notes.push(`${a.malformed} line(s) of the review files are not reviews (see the log).`);
  const fleiss = a.fleiss
    ? el('p', {
        className: 'fleiss',
        text: `Fleiss' κ ${fmtKappa(a.fleiss.kappa)} over ${a.fleiss.n} episode(s) rated by all ${a.fleiss.raters} reviewers`,
      })
    : el('p', { className: 'fleiss muted', text: "Fleiss' κ: needs episodes rated by at least two reviewers" });
  const table = el(
    'table',
    { className: 'pairs' },
    el('tr', {}, ...['rater A', 'rater B', 'episodes', 'κ', 'agreement', 'differ'].map((h) => el('th', { text: h }))),
    ...a.pairs.map((p, i) => {
      const row = el(
        'tr',
        {},
        el('td', { text: p.a }),
        el('td', { text: p.b }),
        el('td', { text: String(p.n) }),
        el('td', { className: 'kappa', text: fmtKappa(p.kappa) }),
        el('td', { text: fmtShare(p.agree) }),
        el('td', { text: String(p.disagreements.length) }),
      );
      row.dataset.pair = String(i);
      return row;
    }),
  );
  const details = a.pairs.map((p, i) => {
    const d = el(
      'details',
      { className: 'pair' },
      el('summary', { text: `${p.a} vs ${p.b}: κ ${fmtKappa(p.kappa)}, ${p.disagreements.length} disagreement(s)` }),
      confusionTable(p),
      el('div', { className: 'links' }, ...p.disagreements.map(episodeLink)),
    );
    // The first pair (a reviewer against the reward, or two reviewers) open: its disagreements are what to read first.
    d.open = i === 0;
    return d;
  });
  body.replaceChildren(summary, ...notes.map((n) => el('p', { className: 'muted', text: n })), fleiss, table, ...details);
}

function onMessage(msg: ToWebview): void {
  switch (msg.type) {
    case 'loading':
      status.textContent = 'loading…';
      break;
    case 'agreement':
      title.textContent = msg.title;
      title.title = msg.source;
      status.textContent = '';
      status.classList.remove('error');
      render(msg.agreement);
      break;
    case 'error':
      status.textContent = msg.message;
      status.classList.add('error');
      break;
  }
}

api.post({ type: 'ready' });
