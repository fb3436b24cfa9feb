/**
 * TensorBoard's smoothing: an exponential moving average, debiased so the first points are not pulled towards zero.
 * `weight` 0 returns the values unchanged; NaN values are skipped (they stay NaN).
 */
export function smoothEma(values: readonly number[], weight: number): number[] {
  if (weight <= 0) return values.slice();
  let last = 0;
  let n = 0;
  return values.map((v) => {
    if (!Number.isFinite(v)) return v;
    last = last * weight + (1 - weight) * v;
    n++;
    return last / (1 - weight ** n);
  });
}
