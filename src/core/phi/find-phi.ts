import type { PhiFinding } from './phi-categories';
import { findNames } from './name-recogniser';
import { findStructured } from './structured-recognisers';
import { findCandidates, newCandidates } from './text-candidates';

/** Reused by every call (one string is scanned at a time). */
const candidates = newCandidates();

/**
 * Every identifier in `text`, in order, none overlapping. Where findings overlap the longer wins (a street address over the
 * name of its street); of two with the same span, the structured one (a labelled fax over a phone).
 */
export function findPhi(text: string): PhiFinding[] {
  const c = findCandidates(text, candidates);
  const structured = findStructured(text, c);
  const names = findNames(text, c);
  // Names alone are already in order and apart (each is looked for past the last one's end): nothing to resolve.
  if (!structured.length) return names;
  if (structured.length < 2 && !names.length) return structured;
  const all = structured.concat(names);
  // Array.prototype.sort is stable: findings of the same length keep their order, structured before names.
  const ordered = all.sort((a, b) => b.end - b.start - (a.end - a.start));
  const kept: PhiFinding[] = [];
  for (const f of ordered) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
  return kept.sort((a, b) => a.start - b.start);
}
