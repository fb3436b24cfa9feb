import { describeMasked } from '../../src/core/phi/masked-segments';
import type { PhiCategory, PhiCounts } from '../../src/core/phi/phi-categories';
import { el } from './vscode-api';

/**
 * The "Mask identifiers" toggle and a status line that counts the identifiers masked in what the page shows: the chips
 * in its DOM, counted again whenever the page changes (rows scrolled into view, another episode opened).
 */
export class PhiMaskBar {
  readonly root: HTMLElement;
  private readonly box = el('input');
  private readonly status = el('span', { className: 'phi-mask-status' });
  private on: boolean | undefined;

  constructor(toggle: (on: boolean) => void) {
    this.box.type = 'checkbox';
    this.box.id = 'phi-mask';
    this.box.addEventListener('change', () => toggle(this.box.checked));
    this.status.id = 'phi-mask-status';
    this.status.setAttribute('role', 'status');
    this.root = el('span', { className: 'phi-mask' }, el('label', {}, this.box, 'Mask identifiers'), this.status);
    this.root.hidden = true;
    new MutationObserver(() => this.count()).observe(document.body, { childList: true, subtree: true });
  }

  /** Shows the extension's setting; true when it changed (the page then asks again for the data it shows). */
  set(on: boolean): boolean {
    const changed = this.on !== undefined && this.on !== on;
    this.on = on;
    this.box.checked = on;
    this.root.hidden = false;
    this.count();
    return changed;
  }

  private count(): void {
    const counts: PhiCounts = {};
    for (const chip of document.querySelectorAll<HTMLElement>('.phi-chip')) {
      const c = chip.dataset.category as PhiCategory;
      counts[c] = (counts[c] ?? 0) + 1;
    }
    const text = this.on ? describeMasked(counts) : 'Identifiers shown as written';
    // Setting the same text again would be a change to observe, and so on forever.
    if (this.status.textContent !== text) this.status.textContent = text;
  }
}
