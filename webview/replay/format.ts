/** Number formatting shared by the replay views. */
export function fmtScore(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

export function fmtSigned(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  return `${v > 0 ? '+' : ''}${v.toFixed(3)}`;
}

/** The sign of an advantage as a user reads it: + pushed up, − pushed down, 0 no signal. */
export function signOf(v: number | null | undefined): '+' | '−' | '0' | '–' {
  if (v === null || v === undefined) return '–';
  if (Math.abs(v) < 1e-9) return '0';
  return v > 0 ? '+' : '−';
}

export function fmtShare(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : `${(v * 100).toFixed(0)}%`;
}
