/** How often two pass/fail raters said pass/fail: `pf` = the first said pass, the second fail. */
export interface Confusion {
  pp: number;
  pf: number;
  fp: number;
  ff: number;
}

/**
 * Cohen's κ of two pass/fail raters over the same items: κ = (p_o − p_e) / (1 − p_e), p_o the share of items they agree
 * on, p_e the agreement expected by chance from each rater's pass rate. Null when undefined: no items. When both raters
 * gave every item the same one class, p_o = p_e = 1 and the formula is 0/0: κ is 1 then (they agree on everything), the
 * convention the reward playground already used, rather than null.
 */
export function cohenKappa(a: boolean[], b: boolean[]): { n: number; kappa: number | null; agree: number | null; confusion: Confusion } {
  if (a.length !== b.length) throw new Error(`cohenKappa: ${a.length} ratings against ${b.length}`);
  const confusion: Confusion = { pp: 0, pf: 0, fp: 0, ff: 0 };
  for (let i = 0; i < a.length; i++) {
    if (a[i]) confusion[b[i] ? 'pp' : 'pf']++;
    else confusion[b[i] ? 'fp' : 'ff']++;
  }
  const n = a.length;
  if (n === 0) return { n, kappa: null, agree: null, confusion };
  const po = (confusion.pp + confusion.ff) / n;
  const aPass = (confusion.pp + confusion.pf) / n;
  const bPass = (confusion.pp + confusion.fp) / n;
  const pe = aPass * bPass + (1 - aPass) * (1 - bPass);
  // p_e = 1 only when both are constant in the same class, so p_o = 1 too.
  const kappa = pe === 1 ? 1 : (po - pe) / (1 - pe);
  return { n, kappa, agree: po, confusion };
}

/**
 * Fleiss' κ of pass/fail ratings: `ratings[i]` holds item i's ratings, one per rater, every item rated by the same
 * number of raters (at least two). With n raters, P_i = (Σ_j n_ij² − n) / (n(n − 1)) per item, P̄ their mean, p_j the
 * share of all ratings in class j, P_e = Σ_j p_j²; κ = (P̄ − P_e) / (1 − P_e). Null with no items or fewer than two
 * raters; 1 when every rating is the same class (P̄ = P_e = 1, the same convention as cohenKappa).
 */
export function fleissKappa(ratings: boolean[][]): { n: number; raters: number; kappa: number | null } {
  const n = ratings.length;
  const raters = ratings[0]?.length ?? 0;
  if (ratings.some((r) => r.length !== raters)) throw new Error('fleissKappa: every item needs the same number of ratings');
  if (n === 0 || raters < 2) return { n, raters, kappa: null };
  let pass = 0;
  let pSum = 0;
  for (const item of ratings) {
    const yes = item.filter(Boolean).length;
    const no = raters - yes;
    pass += yes;
    pSum += (yes * yes + no * no - raters) / (raters * (raters - 1));
  }
  const pBar = pSum / n;
  const p = pass / (n * raters);
  const pe = p * p + (1 - p) * (1 - p);
  return { n, raters, kappa: pe === 1 ? 1 : (pBar - pe) / (1 - pe) };
}
