/**
 * A logged metric value as verl and TRL print it: a Python number (`0.5`, `1e-06`, `nan`, `inf`), a NumPy 2 repr
 * (`np.float64(0.71)`, `np.int64(3)`), a transformers 5 string (`'0.5625'`, quotes already removed), or `True`/`False`.
 * Returns undefined for anything else (`None`, text), which callers report or skip.
 */
export function parseMetricValue(raw: string): number | undefined {
  let s = raw.trim();
  const open = s.indexOf('(');
  if (open > 0 && s.endsWith(')') && (s.startsWith('np.') || s.startsWith('numpy.') || s.startsWith('tensor')))
    s = s.slice(open + 1, -1).trim();
  if (s.length === 0) return undefined;
  const n = Number(s);
  if (!Number.isNaN(n)) return n;
  switch (s.toLowerCase()) {
    case 'nan':
    case '-nan':
      return NaN;
    case 'inf':
    case 'infinity':
      return Infinity;
    case '-inf':
    case '-infinity':
      return -Infinity;
    case 'true':
      return 1;
    case 'false':
      return 0;
    default:
      return undefined;
  }
}
