import { FLAG_EMPTY, FLAG_NO_EOS, FLAG_UNCLOSED, type EpisodeTable } from './episode-table';

/** Reward-hacking and learning-signal checks of one step, each with how it was decided. */
export interface StepSignals {
  episodes: number;
  scored: number;
  meanScore: number | null;
  groups: number;
  /** Groups of two or more whose scores are all equal: GRPO learns nothing from them. */
  flatGroups: number;
  flatGroupShare: number | null;
  /** Pearson correlation of score and response length (characters): a strong positive one hints at length hacking. */
  scoreLengthCorrelation: number | null;
  meanResponseLength: number;
  empty: number;
  /** `<think>`, `<answer>` or `<tool_call>` opened and never closed. */
  unclosed: number;
  /** Special tokens kept but no end-of-turn token at the end. */
  noEos: number;
  /** Within 3% of the step's longest response, shared by at least 2 responses: a length cap was probably hit. */
  atLengthCap: number;
  /** Responses with any of the three truncation signs. */
  truncated: number;
}

export function stepSignals(t: EpisodeTable): StepSignals {
  const n = t.length;
  let scored = 0;
  let sum = 0;
  let sumLen = 0;
  let maxLen = 0;
  for (let i = 0; i < n; i++) {
    const s = t.score[i]!;
    if (!Number.isNaN(s)) {
      scored++;
      sum += s;
    }
    sumLen += t.responseLength[i]!;
    maxLen = Math.max(maxLen, t.responseLength[i]!);
  }
  const meanScore = scored ? sum / scored : null;
  const meanLen = n ? sumLen / n : 0;
  // Pearson correlation over scored episodes.
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const s = t.score[i]!;
    if (Number.isNaN(s) || meanScore === null) continue;
    const dx = t.responseLength[i]! - meanLen;
    const dy = s - meanScore;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  const corr = sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
  let multi = 0;
  let flat = 0;
  for (let g = 0; g < t.groupCount; g++) {
    if (t.groupSize(g) < 2) continue;
    multi++;
    const [a, ...rest] = t.groupMembers(g);
    if (rest.every((j) => t.score[j] === t.score[a!])) flat++;
  }
  const capFloor = maxLen * 0.97;
  let atCapCount = 0;
  for (let i = 0; i < n; i++) if (maxLen > 0 && t.responseLength[i]! >= capFloor) atCapCount++;
  const capHit = atCapCount >= 2;
  let empty = 0;
  let unclosed = 0;
  let noEos = 0;
  let truncated = 0;
  for (let i = 0; i < n; i++) {
    const f = t.flags[i]!;
    const atCap = capHit && t.responseLength[i]! >= capFloor;
    if (f & FLAG_EMPTY) empty++;
    if (f & FLAG_UNCLOSED) unclosed++;
    if (f & FLAG_NO_EOS) noEos++;
    if (f & (FLAG_UNCLOSED | FLAG_NO_EOS) || atCap) truncated++;
  }
  return {
    episodes: n,
    scored,
    meanScore,
    groups: multi,
    flatGroups: flat,
    flatGroupShare: multi ? flat / multi : null,
    scoreLengthCorrelation: corr,
    meanResponseLength: meanLen,
    empty,
    unclosed,
    noEos,
    atLengthCap: capHit ? atCapCount : 0,
    truncated,
  };
}

/** A GRPO group's spread: the n responses to one prompt in a step. */
export interface GroupStats {
  group: number;
  /** Its rows in file order (not adjacent: verl's balance_batch reorders the batch). */
  members: number[];
  /** Its first row. */
  start: number;
  size: number;
  mean: number | null;
  std: number | null;
  min: number | null;
  max: number | null;
}

export function groupStats(t: EpisodeTable, g: number): GroupStats {
  const members = t.groupMembers(g);
  const base = { group: g, members, start: members[0]!, size: members.length };
  const scores: number[] = [];
  for (const j of members) if (!Number.isNaN(t.score[j]!)) scores.push(t.score[j]!);
  if (!scores.length) return { ...base, mean: null, std: null, min: null, max: null };
  const mean = scores.reduce((x, y) => x + y, 0) / scores.length;
  const std = Math.sqrt(scores.reduce((x, y) => x + (y - mean) ** 2, 0) / scores.length);
  return { ...base, mean, std, min: Math.min(...scores), max: Math.max(...scores) };
}
