/**
 * A logged metric value as verl and TRL print it: a Python number (`0.5`, `1e-06`, `nan`, `inf`), a NumPy 2 repr
 * (`np.float64(0.71)`, `np.int64(3)`, `np.True_`), a torch scalar (`tensor(1.2)`, and as a CUDA run prints it,
 * `tensor(1.2, device='cuda:0')` with maybe `dtype=` or `grad_fn=` after the number), a transformers 5 string
 * (`'0.5625'`, quotes already removed), or `True`/`False`.
 * Returns undefined for anything else (`None`, text), which callers report or skip.
 */
export function parseMetricValue(raw: string): number | undefined {
  let s = raw.trim();
  const open = s.indexOf('(');
  if (open > 0 && s.endsWith(')') && (s.startsWith('np.') || s.startsWith('numpy.') || s.startsWith('tensor'))) {
    s = s.slice(open + 1, -1);
    // A tensor's keywords (device, dtype, grad_fn) follow its number.
    const comma = s.indexOf(',');
    s = (comma < 0 ? s : s.slice(0, comma)).trim();
  } else if (s.startsWith('np.') || s.startsWith('numpy.')) {
    // NumPy's booleans print as `np.True_` / `np.False_`.
    s = s.slice(s.indexOf('.') + 1).replace(/_$/, '');
  }
  if (s.length === 0) return undefined;
  const n = Number(s);
  if (!Number.isNaN(n)) return n;
  // The words below are short: a long text (a logged completion) is not copied to find that out.
  if (s.length > 9) return undefined;
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

/**
 * Sets `record[key] = value` as an own property for every key: plain assignment to `__proto__` changes the object's
 * prototype instead, and the metric would be lost.
 */
export function setMetric<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
