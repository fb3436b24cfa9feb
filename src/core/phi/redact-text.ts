import { maskText } from './mask-text';
import { withPlaceholders } from './masked-segments';
import type { PhiCategory } from './phi-categories';

/** `text` with each finding replaced by its placeholder (`[PHONE]`), and the categories of what was replaced, in order. */
export function redactText(text: string): { text: string; categories: PhiCategory[] } {
  const segments = maskText(text);
  const categories = segments.flatMap((s) => ('category' in s ? [s.category] : []));
  return { text: categories.length ? withPlaceholders(segments) : text, categories };
}
