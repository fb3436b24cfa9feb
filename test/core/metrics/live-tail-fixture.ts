/** What the live-tail tests share: a host's range reads recorded, and dense verl step lines to append to a log. */
import type { Host, ReadRange } from '../../../src/core/remote/host';
import { denseStepLine, seeded } from './verl-log-generator';
import type { MetricSeries } from '../../../src/core/metrics/metric-series';

/** A range read a host served: where it started and how many bytes came back. */
export interface RangeRead {
  start: number;
  bytes: number;
}

/**
 * Records every range a host reads for a follower (wrapping its readFile), so a test can say "this poll read only the
 * appended bytes". `onStart` runs as each range read has started, with where it starts (to drop a connection mid-read).
 */
export class ReadLog {
  private reads: RangeRead[] = [];
  onStart: ((start: number) => void) | undefined;
  /** Makes the read after this many more fail, as a dropped connection fails the reads in flight. */
  failAfter: number | undefined;

  constructor(host: Host) {
    const readFile = host.readFile.bind(host);
    host.readFile = async (path: string, range?: ReadRange) => {
      if (this.failAfter !== undefined && this.failAfter-- <= 0) {
        this.failAfter = undefined;
        throw new Error(`${host.name}: connection lost (test) while reading ${path}; the next call reconnects`);
      }
      const reading = readFile(path, range);
      this.onStart?.(range?.start ?? 0);
      const buf = await reading;
      this.reads.push({ start: range?.start ?? 0, bytes: buf.length });
      return buf;
    };
  }

  /** The reads since the last take, in file order (ranges read ahead finish in any order). */
  take(): RangeRead[] {
    const r = this.reads.sort((a, b) => a.start - b.start);
    this.reads = [];
    return r;
  }
}

export const bytesOf = (reads: RangeRead[]): number => reads.reduce((n, r) => n + r.bytes, 0);

/** Steps from..to, in order. */
export const stepRange = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Dense verl step lines `from`..`to` (64 metrics each), with a warning every 50 steps as writeDenseVerlLog writes. */
export function denseSteps(from: number, to: number, rng = seeded(from)): string {
  let text = '';
  for (let s = from; s <= to; s++) {
    if (s % 50 === 0) text += '(TaskRunner pid=1234) UserWarning: a warning between steps\n';
    text += `${denseStepLine(s, rng)}\n`;
  }
  return text;
}

/**
 * The steps polls added to a series since the last `take`, checked to be all they parsed: the series' revision counts
 * every step line parsed, so a step read again (an old line re-read) makes the counts differ.
 */
export class StepsAdded {
  private length = 0;
  private revision = 0;

  constructor(private readonly series: () => MetricSeries) {}

  take(): number[] {
    const s = this.series();
    const added = s.steps.slice(this.length);
    const parsed = s.revision - this.revision;
    this.length = s.length;
    this.revision = s.revision;
    if (parsed !== added.length) throw new Error(`${parsed} step lines parsed for ${added.length} new steps: some were read again`);
    return added;
  }
}
