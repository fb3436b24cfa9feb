import { findPhi } from './find-phi';
import { joinMasked, type MaskedSegment } from './masked-segments';
import { mapStrings, unusedName } from './value-strings';

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

/** `text` masked, as the one string a webview gets (masked-segments.ts reads it back). */
export function maskString(text: string): string {
  return joinMasked(maskText(text));
}

/** Every string inside `value` (arrays and plain objects, object keys too) masked with `maskString`. */
export function maskStrings<T>(value: T): T {
  return mapStrings(value, maskString);
}

/** Column names masked, as a row's keys are (`maskStrings`), numbered in the same way where two mask the same. */
export function maskNames(names: string[]): string[] {
  const used = new Set<string>();
  return names.map((n) => unusedName(maskString(n), used));
}

/** A conversation's turns with their text and each part's text masked; roles and part kinds stay as they are. */
export function maskTurns<T extends { content: string; parts: { text: string }[] }>(turns: T[]): T[] {
  return turns.map((t) => ({ ...t, content: maskString(t.content), parts: t.parts.map((p) => ({ ...p, text: maskString(p.text) })) }));
}
