/*
 * The detector as it was at a75513b, before it tried its patterns only at candidates: each pattern a global scan of
 * every string. Kept as the reference the fast detector must agree with, finding for finding (fast-path.test.ts).
 */
import type { PhiFinding } from '../../../../src/core/phi/phi-categories';
import { findNames } from './name-recogniser';
import { findStructured } from './structured-recognisers';

/**
 * Every identifier in `text`, in order, none overlapping. Where findings overlap the longer wins (a street address over the
 * name of its street); of two with the same span, the structured one (a labelled fax over a phone).
 */
export function findPhi(text: string): PhiFinding[] {
  const all = [...findStructured(text), ...findNames(text)];
  if (all.length < 2) return all;
  // Array.prototype.sort is stable: findings of the same length keep their order, structured before names.
  const ordered = [...all].sort((a, b) => b.end - b.start - (a.end - a.start));
  const kept: PhiFinding[] = [];
  for (const f of ordered) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
  return kept.sort((a, b) => a.start - b.start);
}
