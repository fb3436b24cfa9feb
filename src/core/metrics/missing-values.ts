import type { MissingEntry } from './parser-state';

/** How many steps a note lists before it shortens to a count. */
const LISTED_STEPS = 5;

/**
 * Values a trainer logged as Python's None, by metric: `'grad_norm': None` in a printed TRL dict, `grad_norm:None` on a
 * verl console line, `null` from verl's file logger (json.dumps of None). They are not plotted, so the user is told once
 * per metric, with how many and at which steps, instead of a warning per line or nothing at all.
 */
export class MissingValues {
  private readonly byKey = new Map<string, MissingEntry>();

  /** What a metrics cache file keeps (metric names, counts and steps: no text of the log). */
  toJSON(): Array<[string, MissingEntry]> {
    return [...this.byKey];
  }

  /** Takes what `toJSON` gave, into an empty one. */
  restore(entries: Array<[string, MissingEntry]>): void {
    for (const [k, m] of entries) this.byKey.set(k, { count: m.count, steps: [...m.steps], last: m.last });
  }

  /** Adds what `toJSON` gave for the lines after this one's (a later range of the same log, parsed apart). */
  merge(entries: Array<[string, MissingEntry]>): void {
    for (const [k, m] of entries) {
      const had = this.byKey.get(k);
      if (!had) this.byKey.set(k, { count: m.count, steps: [...m.steps], last: m.last });
      else {
        had.count += m.count;
        had.last = m.last;
        had.steps.push(...m.steps.slice(0, Math.max(0, LISTED_STEPS - had.steps.length)));
      }
    }
  }

  /** A value of `key` at `step` was None (JSON `null` is Python's None as json.dumps writes it). */
  add(key: string, step: number): void {
    const m = this.byKey.get(key);
    if (!m) {
      this.byKey.set(key, { count: 1, steps: [step], last: step });
      return;
    }
    m.count++;
    m.last = step;
    if (m.steps.length < LISTED_STEPS) m.steps.push(step);
  }

  /** One line per metric: `grad_norm: 12 values were None (steps 1, 2, 3, 4, 5, …, 40); not plotted`. */
  notes(): string[] {
    return [...this.byKey].map(([key, m]) => {
      const listed = m.count > m.steps.length ? `${m.steps.join(', ')}, …, ${m.last}` : m.steps.join(', ');
      const what = m.count === 1 ? '1 value was None' : `${m.count} values were None`;
      return `${key}: ${what} (step${m.count === 1 ? '' : 's'} ${listed}); not plotted`;
    });
  }
}
