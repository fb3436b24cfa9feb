import { PHI_CATEGORIES, type PhiCategory } from './phi-categories';
import { maskText, type MaskedSegment } from './mask-text';

/**
 * Masked text travels to a webview as one string, so every field and JSON value that held text still holds a string:
 * each finding becomes OPEN + category + CLOSE (Unicode private-use characters, which no clinical text uses and
 * JSON.stringify leaves as they are), and the webview turns those back into chips.
 */
const OPEN = '\uE000';
const CLOSE = '\uE001';
const TOKEN = new RegExp(`${OPEN}([a-z]*)(${CLOSE})?`, 'g');
const MARKERS = new RegExp(`[${OPEN}${CLOSE}]`, 'g');

/** `text` masked, as a string: the markers are taken out of the text first, so the text cannot fake a finding. */
export function maskString(text: string): string {
  return maskText(text)
    .map((s) => ('category' in s ? `${OPEN}${s.category}${CLOSE}` : s.text.replace(MARKERS, '\uFFFD')))
    .join('');
}

/** The segments of a string `maskString` made (any other string is one text segment). A finding cut in two by shortening the text is left out. */
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

/** Every string inside `value` (arrays and plain objects, keys left as they are) masked with `maskString`. */
export function maskStrings<T>(value: T): T {
  if (typeof value === 'string') return maskString(value) as T;
  if (Array.isArray(value)) return value.map(maskStrings) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskStrings(v)])) as T;
  return value;
}
