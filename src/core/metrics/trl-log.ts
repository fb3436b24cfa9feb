import { parseMetricValue, setMetric } from './metric-value';

const BACKSLASH = 0x5c;

export interface ParsedTrlDict {
  metrics: Record<string, number>;
  bad: string[];
  /** Keys logged as `None` (e.g. `'grad_norm': None`). */
  missing: string[];
  /** Keys are `eval_*` (an evaluation, logged at the training step it follows). */
  eval: boolean;
}

/**
 * Parses a Python dict literal as transformers' trainer prints its logs: `{'loss': 0.0123, 'reward': 0.56, 'epoch': 0.12}`
 * (transformers 4) or `{'loss': '0.0123', ...}` (transformers 5, values as strings). `None` values are listed in
 * `missing`, other text is skipped; lists and nested dicts are skipped whole. Throws with the reason when the literal is broken.
 */
export function parseTrlDict(text: string): ParsedTrlDict {
  const metrics: Record<string, number> = {};
  const bad: string[] = [];
  const missing: string[] = [];
  let i = 1;
  const n = text.length;
  const skipWs = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  // A slice of the line, not a string built a character at a time: one 100 MB value took 40 times its size that way.
  const readQuoted = (): string => {
    const q = text.charCodeAt(i++);
    const start = i;
    let escaped = false;
    while (i < n && text.charCodeAt(i) !== q) {
      if (text.charCodeAt(i) === BACKSLASH) {
        escaped = true;
        i++;
      }
      i++;
    }
    if (i >= n) throw new Error(`unterminated string at column ${i}`);
    const quoted = text.slice(start, i++);
    return escaped ? quoted.replace(/\\(.)/gs, '$1') : quoted;
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
      if (v !== undefined) setMetric(metrics, key, v);
      else if (raw.trim() === 'None') missing.push(key);
      else if (/^[\d.+-]/.test(raw.trim())) bad.push(`${key}: ${raw.trim()}`);
    }
    skipWs();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(i >= n ? 'missing closing }' : `expected ',' or '}' at column ${i + 1}`);
  }
  const keys = Object.keys(metrics);
  return { metrics, bad, missing, eval: keys.length > 0 && keys.every((k) => k.startsWith('eval_') || k === 'epoch') };
}

/** A tqdm bar as tqdm draws it: `{desc}: {pct}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}]`. */
const BAR = /^(.*?)\s*\d+%\|[^|]*\|\s*(\d+)\/(\d+) \[/;

/** A tqdm progress bar: its count, total and description ('' for transformers' training and evaluation bars). */
interface TqdmBar {
  n: number;
  total: number;
  desc: string;
}

/**
 * The tqdm bar a console segment draws, if any. transformers' training bar has no description (ProgressCallback:
 * `tqdm(total=state.max_steps, dynamic_ncols=True)`); the other bars of a run have one ("Writing model shards", "Loading
 * checkpoint shards", datasets' "Map", "Generating train split", TRL's "Tokenizing train dataset").
 */
export function parseBar(segment: string): TqdmBar | undefined {
  const m = BAR.exec(segment);
  if (!m) return undefined;
  return { n: Number(m[2]), total: Number(m[3]), desc: m[1]!.trim().replace(/:$/, '') };
}

/** The dict transformers logs once at the end of training (`train_runtime`, `train_loss`, ...): at the last step, not a new one. */
function isSummary(dict: ParsedTrlDict): boolean {
  return 'train_runtime' in dict.metrics;
}

/**
 * Gives TRL's console dicts their step. The dicts carry none; the training bar does (`N/TOTAL`), but which drawing of
 * it belongs to a dict: transformers logs with `training_bar.write(dict)` (ProgressCallback.on_log), which clears the
 * bars, prints the dict, and redraws the bars at their current count (tqdm's external_write_mode). The bar drawn just
 * BEFORE a dict can be the previous step's (tqdm redraws at most every 0.1 s, so step N's update may never have been
 * drawn); the bar drawn right AFTER it is the dict's own step. So such a dict waits (`pending`) for the next training
 * bar; without one (the log ends, or another dict comes first) it takes the bar before it, at least one past the
 * previous dict.
 * The training bar is a bar without a description; its total is learned from the first dict's bar, so evaluation bars
 * (other totals) are ignored; `eval_*` dicts belong to the last training step. Without any bar (disable_tqdm), dicts are
 * numbered 1, 2, 3, ... (logging events, not optimizer steps).
 */
export class TrlStepTracker<D extends ParsedTrlDict = ParsedTrlDict> {
  /** The last drawing of the training bar (the last bar without a description before its total is known). */
  bar: TqdmBar | undefined;
  private trainTotal: number | undefined;
  private lastStep = 0;
  private events = 0;
  private pending: { dict: D; before: TqdmBar | undefined } | undefined;

  get hasPending(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Feeds a segment that is not a dict (a progress bar, a warning), ANSI codes removed. `nested`: it was drawn below
   * another bar (followed by a cursor-up), as transformers' evaluation bar is while the training bar is open (seen in a
   * real transformers 5.17 log), so it is not the training bar. Returns the pending dict and its step when this segment
   * is the training bar drawn after it.
   */
  sawText(segment: string, nested = false): { dict: D; step: number } | undefined {
    const bar = parseBar(segment);
    if (!bar || bar.desc !== '' || nested) return undefined;
    if (this.trainTotal !== undefined && bar.total !== this.trainTotal) return undefined;
    this.bar = bar;
    if (!this.pending) return undefined;
    this.trainTotal ??= bar.total;
    return this.commit(this.atLeastNext(bar.n));
  }

  /**
   * Takes a parsed dict. An `eval_*` dict returns its step at once (the last training step), after the pending dict if
   * any. A training dict written by tqdm.write (`cleared`: the bar was cleared just before it) becomes pending, and the
   * dict it displaces is returned with its step; a dict printed on a line of its own (PrinterCallback, a script's
   * print) takes the bar before it.
   */
  sawDict(dict: D, cleared: boolean): Array<{ dict: D; step: number }> {
    const out = [];
    const prev = this.flush();
    if (prev) out.push(prev);
    if (dict.eval) out.push({ dict, step: this.lastStep });
    else {
      this.events++;
      this.pending = { dict, before: this.bar };
      if (!cleared) out.push(this.flush()!);
    }
    return out;
  }

  /** The pending dict with its best step from the bar before it (the log ended, or another dict came first). */
  flush(): { dict: D; step: number } | undefined {
    const p = this.pending;
    if (!p) return undefined;
    if (!p.before) return this.commit(this.events);
    this.trainTotal ??= p.before.total;
    return this.commit(this.atLeastNext(p.before.n));
  }

  /**
   * Each training dict is a later step than the one before (only the end-of-training summary shares the last step).
   * TRL's experimental PPO logs before its bar moves (ppo_trainer.py: `global_step += 1; self.log(metrics)`, then
   * on_step_end), so its bar still shows the previous step after each dict.
   */
  private atLeastNext(n: number): number {
    return Math.max(n, isSummary(this.pending!.dict) ? this.lastStep : this.lastStep + 1);
  }

  private commit(step: number): { dict: D; step: number } {
    const dict = this.pending!.dict;
    this.pending = undefined;
    this.lastStep = step;
    return { dict, step };
  }
}
