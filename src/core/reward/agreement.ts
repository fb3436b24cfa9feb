import { cohenKappa } from '../review/agreement';

/** How far two scorers agree on the same samples (pairs where either has no score are left out, and counted). */
export interface Agreement {
  /** Samples both scored. */
  n: number;
  /** Samples left out because one side has no score. */
  missing: number;
  pearson: number | null;
  /** Cohen's kappa on pass/fail (score >= threshold). */
  kappa: number | null;
  /** Share of samples with the same pass/fail. */
  agreement: number | null;
  threshold: number;
  /** Indexes of samples whose pass/fail differs. */
  disagreements: number[];
}

export function pearson(xs: number[], ys: number[]): number | null {
  const n = xs.length;
  if (n < 2) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  // Undefined when one side is constant: say so (null) rather than print NaN.
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

export function agreement(a: Array<number | null | undefined>, b: Array<number | null | undefined>, threshold: number): Agreement {
  const xs: number[] = [];
  const ys: number[] = [];
  const idx: number[] = [];
  let missing = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x !== 'number' || typeof y !== 'number') {
      missing++;
      continue;
    }
    xs.push(x);
    ys.push(y);
    idx.push(i);
  }
  const pa = xs.map((x) => x >= threshold);
  const pb = ys.map((y) => y >= threshold);
  const disagreements = idx.filter((_, k) => pa[k] !== pb[k]);
  return {
    n: xs.length,
    missing,
    pearson: pearson(xs, ys),
    kappa: cohenKappa(pa, pb).kappa,
    agreement: xs.length ? (xs.length - disagreements.length) / xs.length : null,
    threshold,
    disagreements,
  };
}

/** Counts of scores in `bins` equal bins between min and max (one bin when all scores are equal). */
export function histogram(scores: Array<number | null | undefined>, bins = 10): { edges: number[]; counts: number[] } {
  const xs = scores.filter((s): s is number => typeof s === 'number');
  if (!xs.length) return { edges: [], counts: [] };
  let lo = Math.min(...xs);
  let hi = Math.max(...xs);
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const width = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const x of xs) counts[Math.min(bins - 1, Math.floor((x - lo) / width))]!++;
  return { edges: Array.from({ length: bins + 1 }, (_, i) => lo + i * width), counts };
}
