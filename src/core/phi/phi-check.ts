import { PHI_CATEGORIES, type PhiCategory } from './phi-categories';

export type PhiCounts = Partial<Record<PhiCategory, number>>;

/** A data file with the counts of its last scan: the file as the user reads it (a relative path, or host:path). */
export interface ScannedFile {
  label: string;
  counts: PhiCounts;
}

export function identifierTotal(counts: PhiCounts): number {
  return PHI_CATEGORIES.reduce((n, c) => n + (counts[c] ?? 0), 0);
}

/** `8 name, 4 date`: most first, ties in the categories' order; counts only, never the text found. */
export function countsText(counts: PhiCounts): string {
  return PHI_CATEGORIES.filter((c) => counts[c])
    .map((c) => [c, counts[c]!] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${n} ${c}`)
    .join(', ');
}

/** `12 identifiers (8 name, 4 date)`. */
export function identifiersText(counts: PhiCounts): string {
  const total = identifierTotal(counts);
  return `${total} identifier${total === 1 ? '' : 's'} (${countsText(counts)})`;
}

/**
 * The warning shown before a dataset leaves this machine (upload) or a run trains on it (submit), or undefined when no
 * scanned file holds identifiers: "data/train.jsonl holds 12 identifiers (8 name, 4 date). Upload anyway?". One
 * function for both commands, so they say the same.
 */
export function phiWarning(files: ScannedFile[], action: 'upload' | 'submit'): string | undefined {
  const found = files.filter((f) => identifierTotal(f.counts) > 0);
  if (!found.length) return undefined;
  const held = found.map((f) => `${f.label} holds ${identifiersText(f.counts)}`).join('; ');
  return `${held}. ${action === 'upload' ? 'Upload' : 'Submit'} anyway?`;
}
