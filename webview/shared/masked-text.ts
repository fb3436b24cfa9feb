import './masked-text.css';
import { PHI_LABELS, maskedSegments, withPlaceholders } from '../../src/core/phi/masked-segments';
import { phiPlaceholder, type PhiCategory } from '../../src/core/phi/phi-categories';

/** A masked identifier as a chip: its placeholder, and its category on hover (the identifier itself never reached the page). */
function phiChip(category: PhiCategory): HTMLElement {
  const chip = document.createElement('span');
  chip.className = 'phi-chip';
  chip.dataset.category = category;
  chip.textContent = phiPlaceholder(category);
  chip.title = `${PHI_LABELS[category]} identifier masked`;
  return chip;
}

/** Text from the extension as nodes: text nodes, and a chip for each identifier the extension masked in it. */
export function maskedNodes(text: string, textNodes: (t: string) => Node | string = (t) => t): Array<Node | string> {
  return maskedSegments(text).map((s) => ('category' in s ? phiChip(s.category) : textNodes(s.text)));
}

/** Text from the extension for an attribute (a hover): each masked identifier as its placeholder. */
export function maskedPlainText(text: string): string {
  return withPlaceholders(maskedSegments(text));
}
