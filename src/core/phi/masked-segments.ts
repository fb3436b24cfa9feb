import { PHI_CATEGORIES, countsText, identifierTotal, phiPlaceholder, type PhiCategory, type PhiCounts } from './phi-categories';

/**
 * Masked text, as the extension sends it to a webview and the webview shows it. Pure (no detector, no I/O): shared with
 * the webviews. The detector's side is mask-text.ts.
 */

/** A piece of masked text: text kept as it is, or a finding of which only the category is left. */
export type MaskedSegment = { text: string } | { category: PhiCategory };

/**
 * Masked text travels as one string, so every field and JSON value that held text still holds a string: each finding
 * is OPEN + category + CLOSE (Unicode private-use characters, which clinical text does not use and JSON.stringify
 * leaves as they are).
 */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const TOKEN = new RegExp(`${OPEN}([a-z]*)(${CLOSE})?`, 'g');
const MARKERS = new RegExp(`[${OPEN}${CLOSE}]`, 'g');

/** Segments as one string; markers in the text are replaced first, so no text can pass for a finding. */
export function joinMasked(segments: MaskedSegment[]): string {
  return segments.map((s) => ('category' in s ? `${OPEN}${s.category}${CLOSE}` : s.text.replace(MARKERS, '\uFFFD'))).join('');
}

/** The segments of a string `joinMasked` made (any other string is one text segment). A finding cut in two by shortening the text is left out. */
export function maskedSegments(s: string): MaskedSegment[] {
  const out: MaskedSegment[] = [];
  let last = 0;
  for (const m of s.matchAll(TOKEN)) {
    if (m.index > last) out.push({ text: s.slice(last, m.index) });
    const category = m[1] as PhiCategory;
    if (m[2]) out.push(PHI_CATEGORIES.includes(category) ? { category } : { text: m[0] });
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push({ text: s.slice(last) });
  return out;
}

/** Segments as plain text, each finding as its placeholder (`[PHONE]`): a redacted string, or a hover's text. */
export function withPlaceholders(segments: MaskedSegment[]): string {
  return segments.map((s) => ('category' in s ? phiPlaceholder(s.category) : s.text)).join('');
}

/** What a masked finding of each category was, for people (a chip's hover). */
export const PHI_LABELS: Record<PhiCategory, string> = {
  name: 'name',
  date: 'date',
  age: 'age',
  phone: 'phone number',
  fax: 'fax number',
  email: 'email address',
  ssn: 'social security number',
  mrn: 'medical record number',
  address: 'street address',
  zip: 'ZIP code',
  url: 'web address',
  ip: 'IP address',
  device: 'device serial number',
  licence: 'licence number',
  plan: 'health plan number',
};

/** "3 identifiers masked (2 phone, 1 date)", the most frequent category first; "No identifiers masked" for none. */
export function describeMasked(counts: PhiCounts): string {
  const total = identifierTotal(counts);
  if (!total) return 'No identifiers masked';
  return `${total} identifier${total === 1 ? '' : 's'} masked (${countsText(counts)})`;
}
