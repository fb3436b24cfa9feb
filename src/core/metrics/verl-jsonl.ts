import type { ParsedStepLine } from './verl-console';
import { errorMessage } from '../errors/located-error';
import { setMetric } from './metric-value';

/** Python's json.dumps writes NaN/Infinity bare; JSON.parse refuses them, so they are quoted first (only on retry). */
const PY_SPECIALS = /(?<=[:,[]\s*)(NaN|-?Infinity)(?=\s*[,}\]])/g;

/**
 * JSON as Python's `json.dump` writes it (verl's file logger, transformers' trainer_state.json): bare NaN, Infinity and
 * -Infinity (a diverging loss) come back as the strings "NaN", "Infinity", "-Infinity". Throws JSON.parse's error for
 * anything else that is broken.
 */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    try {
      return JSON.parse(text.replace(PY_SPECIALS, '"$1"'));
    } catch {
      throw err;
    }
  }
}

/**
 * Parses one line of verl's file logger (`{"step": N, "data": {metric: value, ...}}`). Returns undefined for a line that
 * is not such a record, and throws with the reason for one that starts like a record but is broken (torn or corrupt).
 */
export function parseVerlJsonlLine(line: string): ParsedStepLine | undefined {
  const s = line.trim();
  if (!s.startsWith('{') || !s.includes('"step"')) return undefined;
  let obj: unknown;
  try {
    obj = parsePythonJson(s);
  } catch (err) {
    throw new Error(`not valid JSON (${errorMessage(err)})`);
  }
  if (typeof obj !== 'object' || obj === null) return undefined;
  const { step, data } = obj as { step?: unknown; data?: unknown };
  if (typeof step !== 'number' || !Number.isInteger(step)) throw new Error('"step" is not an integer');
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('"data" is not an object of metrics');
  const metrics: Record<string, number> = {};
  const bad: string[] = [];
  const missing: string[] = [];
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (typeof v === 'number') setMetric(metrics, k, v);
    else if (typeof v === 'boolean') setMetric(metrics, k, v ? 1 : 0);
    else if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') setMetric(metrics, k, Number(v));
    else if (v === null) missing.push(k);
    else if (typeof v !== 'string') bad.push(k);
  }
  return { step, metrics, bad, missing };
}
