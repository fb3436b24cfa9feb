import type { StepRecord } from './metric-series';
import type { Problem } from '../errors/located-error';
import { parseMetricValue } from './metric-value';
import { parsePythonJson } from './verl-jsonl';
import { MissingValues } from './missing-values';
import { errorMessage } from '../errors/located-error';

/**
 * The `log_history` of a TRL/transformers `trainer_state.json` (saved in every `checkpoint-N/`): one entry per logged
 * dict, with its `step` and raw numbers. Entries without a step, and non-numeric values, are reported, not dropped silently:
 * `null` (Python's None) once per metric in `missing`, anything else as a problem.
 */
export function parseTrainerState(text: string, file: string): { records: StepRecord[]; problems: Problem[]; missing: MissingValues } {
  let state: unknown;
  try {
    // json.dump writes a NaN loss as a bare NaN: read, not refused.
    state = parsePythonJson(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${errorMessage(err)})`);
  }
  const history = (state as { log_history?: unknown })?.log_history;
  if (!Array.isArray(history)) throw new Error(`${file}: no log_history list (is this a transformers trainer_state.json?)`);
  const records: StepRecord[] = [];
  const problems: Problem[] = [];
  const missing = new MissingValues();
  history.forEach((entry: unknown, idx) => {
    const field = `log_history[${idx}]`;
    if (typeof entry !== 'object' || entry === null) {
      problems.push({ file, field, severity: 'warning', message: 'not an object' });
      return;
    }
    const { step, ...rest } = entry as Record<string, unknown>;
    if (typeof step !== 'number' || !Number.isInteger(step)) {
      problems.push({ file, field: `${field}.step`, severity: 'warning', message: 'missing or not an integer; entry skipped' });
      return;
    }
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(rest)) {
      const n = typeof v === 'number' ? v : typeof v === 'string' ? parseMetricValue(v) : undefined;
      if (n !== undefined) metrics[k] = n;
      else if (v === null) missing.add(k, step);
      else
        problems.push({
          file,
          field: `${field}.${k}`,
          severity: 'warning',
          message: `not a number (${JSON.stringify(v).slice(0, 40)}); not plotted`,
        });
    }
    records.push({ step, metrics });
  });
  return { records, problems, missing };
}
