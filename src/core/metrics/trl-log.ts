import { parseMetricValue } from './metric-value';

export interface ParsedTrlDict {
  metrics: Record<string, number>;
  bad: string[];
  /** Keys are `eval_*` (an evaluation, logged at the training step it follows). */
  eval: boolean;
}

/**
 * Parses a Python dict literal as transformers' trainer prints its logs: `{'loss': 0.0123, 'reward': 0.56, 'epoch': 0.12}`
 * (transformers 4) or `{'loss': '0.0123', ...}` (transformers 5, values as strings). Non-numeric values (`None`, text)
 * are skipped; lists and nested dicts are skipped whole. Throws with the reason when the literal is broken.
 */
export function parseTrlDict(text: string): ParsedTrlDict {
  const metrics: Record<string, number> = {};
  const bad: string[] = [];
  let i = 1;
  const n = text.length;
  const skipWs = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  const readQuoted = (): string => {
    const q = text[i++];
    let out = '';
    while (i < n && text[i] !== q) {
      if (text[i] === '\\' && i + 1 < n) i++;
      out += text[i++];
    }
    if (i >= n) throw new Error(`unterminated string at column ${i}`);
    i++;
    return out;
  };
  for (;;) {
    skipWs();
    if (i >= n) throw new Error('missing closing }');
    if (text[i] === '}') break;
    if (text[i] !== "'" && text[i] !== '"') throw new Error(`expected a quoted key at column ${i + 1}`);
    const key = readQuoted();
    skipWs();
    if (text[i] !== ':') throw new Error(`expected ':' after '${key}'`);
    i++;
    skipWs();
    let raw: string | undefined;
    if (text[i] === "'" || text[i] === '"') raw = readQuoted();
    else if (text[i] === '[' || text[i] === '{' || text[i] === '(') {
      let depth = 0;
      do {
        if (text[i] === '[' || text[i] === '{' || text[i] === '(') depth++;
        else if (text[i] === ']' || text[i] === '}' || text[i] === ')') depth--;
        i++;
      } while (i < n && depth > 0);
    } else {
      const start = i;
      let depth = 0;
      while (i < n && (depth > 0 || (text[i] !== ',' && text[i] !== '}'))) {
        if (text[i] === '(') depth++;
        else if (text[i] === ')') depth--;
        i++;
      }
      raw = text.slice(start, i);
    }
    if (raw !== undefined) {
      const v = parseMetricValue(raw);
      if (v !== undefined) metrics[key] = v;
      else if (raw.trim() !== 'None' && raw.trim() !== '' && /^[\d.+-]/.test(raw.trim())) bad.push(`${key}: ${raw.trim()}`);
    }
    skipWs();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(i >= n ? 'missing closing }' : `expected ',' or '}' at column ${i + 1}`);
  }
  const keys = Object.keys(metrics);
  return { metrics, bad, eval: keys.length > 0 && keys.every((k) => k.startsWith('eval_') || k === 'epoch') };
}

const BAR = /(\d+)\/(\d+) \[/;

/**
 * Gives TRL's console dicts their step: the dicts carry none, but the training progress bar just before each one shows
 * `N/TOTAL` (tqdm redraws it with carriage returns on the same line). The training bar is the one whose total the first
 * training dict followed; evaluation bars (other totals) are ignored and `eval_*` dicts belong to the last training step.
 * Without any bar, dicts are numbered 1, 2, 3, ... (logging events, not optimizer steps).
 */
export class TrlStepTracker {
  private bar: { n: number; total: number } | undefined;
  private trainTotal: number | undefined;
  private lastStep = 0;
  private events = 0;

  /** Feeds a segment of console output that is not a dict (a progress bar, a warning). */
  sawText(segment: string): void {
    const m = BAR.exec(segment);
    if (!m) return;
    const total = Number(m[2]);
    if (this.trainTotal === undefined || total === this.trainTotal) this.bar = { n: Number(m[1]), total };
  }

  /** The step a parsed dict belongs to. */
  stepFor(dict: ParsedTrlDict): number {
    if (dict.eval) return this.lastStep;
    this.events++;
    if (this.bar) {
      this.trainTotal ??= this.bar.total;
      this.lastStep = Math.max(this.bar.n, dict.eval ? 0 : 1);
    } else {
      this.lastStep = this.events;
    }
    return this.lastStep;
  }
}
