import type { PhiFinding } from './phi-categories';

/**
 * Every identifier in `text`, in order, none overlapping.
 * TEMPORARY STAND-IN while the detector is written: phones only.
 */
export function findPhi(text: string): PhiFinding[] {
  const out: PhiFinding[] = [];
  for (const m of text.matchAll(/\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b/g)) out.push({ category: 'phone', start: m.index, end: m.index + m[0].length });
  return out;
}
