import { findPhi } from './find-phi';
import { PHI_CATEGORIES, type PhiCategory } from './phi-categories';

/** A piece of masked text: text kept as it is, or a finding of which only the category is left. */
export type MaskedSegment = { text: string } | { category: PhiCategory };

/** How many findings of each category were masked. */
export type PhiCounts = Partial<Record<PhiCategory, number>>;

/** `text` with every identifier replaced by its category: the identifier's text is in none of the segments. */
export function maskText(text: string): MaskedSegment[] {
  const out: MaskedSegment[] = [];
  let last = 0;
  for (const f of findPhi(text)) {
    if (f.start > last) out.push({ text: text.slice(last, f.start) });
    out.push({ category: f.category });
    last = f.end;
  }
  if (last < text.length) out.push({ text: text.slice(last) });
  return out;
}

/** "3 identifiers masked (2 phone, 1 date)", the most frequent category first; "no identifiers masked" for none. */
export function describeMasked(counts: PhiCounts): string {
  const parts = PHI_CATEGORIES.filter((c) => counts[c])
    .sort((a, b) => counts[b]! - counts[a]!)
    .map((c) => `${counts[c]} ${c}`);
  const total = PHI_CATEGORIES.reduce((n, c) => n + (counts[c] ?? 0), 0);
  if (!total) return 'no identifiers masked';
  return `${total} identifier${total === 1 ? '' : 's'} masked (${parts.join(', ')})`;
}
