/**
 * The HIPAA Safe Harbor identifiers (45 CFR 164.514(b)(2)) that appear in clinical text, as the categories a finding has.
 * `device`, `licence` and `plan` are the numbers that can be told apart by their label.
 */
export const PHI_CATEGORIES = [
  'name',
  'date',
  'age',
  'phone',
  'fax',
  'email',
  'ssn',
  'mrn',
  'address',
  'zip',
  'url',
  'ip',
  'device',
  'licence',
  'plan',
] as const;

export type PhiCategory = (typeof PHI_CATEGORIES)[number];

/** One identifier found in a string: `start`/`end` are UTF-16 offsets into that string (JavaScript's `slice`). */
export interface PhiFinding {
  category: PhiCategory;
  start: number;
  end: number;
}

/** How many findings of each category: what a scan, a mask or a redaction keeps of what it found. */
export type PhiCounts = Partial<Record<PhiCategory, number>>;

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

/** What a masked or redacted finding shows instead of its text: `[PHONE]`. */
export function phiPlaceholder(category: PhiCategory): string {
  return `[${category.toUpperCase()}]`;
}
