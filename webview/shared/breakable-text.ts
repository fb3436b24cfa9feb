import { maskedNodes } from './masked-text';

/**
 * Untrusted text as text nodes (identifiers the extension masked as chips), with a <wbr> every RUN characters inside long unbroken runs (base64, repeated tokens, minified JSON).
 * Chromium shapes and line-breaks one unbroken run in roughly quadratic time: 200k characters without a space froze a webview for
 * 20-50 s; with these break opportunities the same text lays out in about 0.25 s. Copied text is unchanged (<wbr> holds no text), and
 * ordinary words are never split because only runs longer than RUN get break opportunities.
 */
const RUN = 100;
const LONG_RUN = new RegExp(`\\S{${RUN + 1},}`, 'g');

export function setBreakableText(target: HTMLElement, text: string): void {
  target.replaceChildren(...maskedNodes(text, breakable));
}

function breakable(text: string): DocumentFragment {
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    const start = m.index;
    if (start > last) frag.append(text.slice(last, start));
    const run = m[0];
    for (let i = 0; i < run.length; i += RUN) {
      if (i > 0) frag.append(document.createElement('wbr'));
      frag.append(run.slice(i, i + RUN));
    }
    last = start + run.length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}
