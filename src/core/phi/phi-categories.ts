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

/** What a masked or redacted finding shows instead of its text: `[PHONE]`. */
export function phiPlaceholder(category: PhiCategory): string {
  return `[${category.toUpperCase()}]`;
}
