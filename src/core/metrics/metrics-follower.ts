import type { Host } from '../remote/host';
import type { Problem } from '../errors/located-error';
import { readLineBytes, readLineRuns } from '../io/line-reader';
import { MetricSeries } from './metric-series';
import { MetricLogParser, type Framework, type LineProblem } from './metric-log-parser';
import { parseTrainerState } from './trl-trainer-state';
import { MissingValues } from './missing-values';
import type { CachedParse, MetricsCache } from './metrics-cache';
import { parseInRanges, splitWorkerCount, SPLIT_MIN_BYTES } from './split-parse';

/** Bytes per range read: large enough that a read's fixed cost vanishes, small enough that two in flight stay a few MB. */
const CHUNK = 4 << 20;
const NL = 0x0a;
/** Room past the size a live poll saw, for lines finished since: a poll reads what is new in one range of about its size. */
const GROWTH = 64 << 10;
/** Below this a log parses here in a fraction of a second: a worker thread's start (cache.fill) costs more than it saves. */
const FILL_MIN_BYTES = 32 << 20;
/** How much of a live log's unfinished last line is read for the training bar (tqdm redraws are ~100 bytes each). */
const PEEK_BYTES = 64 << 10;

export interface PollOptions {
  live?: boolean;
  final?: boolean;
  signal?: AbortSignal;
  maxBytes?: number;
  /**
   * How far the first read of a big log has come, in bytes of `size`: called about every READ_REPORT_BYTES as this
   * poll reads, and as a worker thread's parse of the log advances while this poll waits for it.
   */
  onRead?: (read: number, size: number) => void;
  /** Read no further than this byte offset (a line's start): one range of a log, parsed on a worker thread. */
  end?: number;
}

/**
 * The first read of a big local log, split over worker threads by byte ranges (split-parse.ts): `workers` (default one
 * per core, see splitWorkerCount) when the log has at least `minBytes` (default SPLIT_MIN_BYTES). For a reader that
 * wants the whole log at once (`medrl metrics`); the dashboard's big logs go to the metrics cache on a worker instead.
 */
export interface SplitOptions {
  workers?: number;
  minBytes?: number;
}

/** How often a poll's onRead hears of its progress. */
const READ_REPORT_BYTES = 8 << 20;

/** What a poll found. */
export interface PollResult {
  /** Steps added or changed by this poll. */
  steps: number;
  /** The file shrank (a resumed verl run truncates metrics.jsonl): it is read again from the start; earlier points stay. */
  restarted: boolean;
  /** The poll stopped at `maxBytes` with more to read: poll again at once (a big log loads in slices, drawn as it comes). */
  more: boolean;
}

/** A parse of a log into the cache on a worker thread, under way. */
interface Filling {
  parse: Promise<CachedParse | undefined>;
  stop: AbortController;
  /** The log's size when it started, and how far the worker has read. */
  size: number;
  read: number;
  /** The waiting poll's onRead, told as the worker reads on. */
  onRead?: (read: number, size: number) => void;
}

/**
 * Follows one metrics file on a host: a log or JSONL read incrementally from the last complete line (through
 * `readLineBytes`, so only new bytes cross the network, and lines are parsed from bytes), or a `trainer_state.json` read again when it changes.
 * Every poll adds to the same MetricSeries, so a resumed run's repeated steps overwrite the earlier ones.
 * A poll that fails (the host's connection dropped) keeps what it had read: the offset is past every line it parsed, so
 * the next poll, on the host's next connection, reads only what it had not.
 */
export class MetricsFollower {
  /** Replaced when a parse of the whole log done on another thread is taken (takeFilled). */
  parser: MetricLogParser;
  private offset = 0;
  private stateStamp = '';
  private stateProblems: Problem[] = [];
  private stateMissing = new MissingValues();
  /** Whether the cache was looked in (once, before the first read), and the offset its file holds. */
  private cacheLooked = false;
  private cachedOffset = 0;
  /** The parse of this log into the cache on another thread, under way (restoreCached started it). */
  private filling: Filling | undefined;
  /** How the first read is split over threads, until it has happened (or could not). */
  private split: SplitOptions | undefined;

  constructor(
    readonly host: Host,
    readonly path: string,
    series = new MetricSeries(),
    private readonly cache?: MetricsCache,
    opts: { split?: SplitOptions } = {},
  ) {
    this.parser = new MetricLogParser(series);
    this.split = opts.split;
  }

  /** Where the next poll reads from: just past the last line read. */
  get readOffset(): number {
    return this.offset;
  }

  /** Reads from `offset` (a line's start) on, not from the file's start: one range of a log, parsed on a worker thread. */
  startAt(offset: number): void {
    this.offset = offset;
  }

  get source(): string {
    return this.path;
  }

  get series(): MetricSeries {
    return this.parser.series;
  }

  get framework(): Framework | undefined {
    return this.parser.framework;
  }

  get isTrainerState(): boolean {
    return this.path.endsWith('trainer_state.json');
  }

  /**
   * Reads what is new. `live`: stamp new steps with the time they were seen (wall time for logs without step timings).
   * `final`: also parse a last line without a newline (a finished or truncated log); otherwise it waits for its newline.
   * `maxBytes`: stop at the first complete line past that many bytes, with `more` set.
   */
  async poll(opts: PollOptions = {}): Promise<PollResult> {
    if (this.isTrainerState) return this.pollTrainerState();
    if (this.cache && !this.cacheLooked) await this.restoreCached(this.cache, opts.signal);
    // While the whole log is parsed on another thread, the first slice is read here (charts show its start at once);
    // the next poll takes the whole parse and reads on from where it stopped.
    if (this.filling && (opts.maxBytes === undefined || this.offset > 0)) await this.takeFilled(this.filling, opts.onRead);
    if (this.split) await this.readSplit(this.split, opts.signal);
    const size = Math.min((await this.host.stat(this.path)).size, opts.end ?? Infinity);
    const restarted = size < this.offset;
    if (restarted) {
      this.offset = 0;
      // The series keeps the earlier points, which a parse of the new file would not have: not a parse to keep.
      this.cachedOffset = Infinity;
    }
    const now = opts.live ? Date.now() : undefined;
    const from = this.offset;
    let reported = from;
    let steps = 0;
    let more = false;
    // Scan from the last complete line (nothing to read when the file has not grown); once the log shows its format, scan
    // again from there for that format's marker only.
    for (let rescan = size > this.offset; rescan;) {
      rescan = false;
      const markers = this.parser.markers();
      // What is new decides the reads: a small append is one range of about its size (one SFTP read on an SSH host), and
      // only a large one (the first read of a big log) is read ahead in chunks.
      const pending = size - this.offset;
      // Lines without a marker count as read too: the next poll starts after them.
      const progress = { end: this.offset };
      try {
        const read = {
          start: this.offset,
          end: opts.end,
          matching: markers,
          includePartial: opts.final,
          signal: opts.signal,
          chunkSize: Math.min(CHUNK, pending + GROWTH),
          // Not before the format is known: the first metric line starts a rescan, and what was read ahead would be read again.
          readAhead: pending > CHUNK && this.parser.framework !== undefined ? 2 : 0,
          progress,
        };
        // A log that has shown only verl console step lines is read in runs of lines (its parser's WebAssembly scanner).
        for await (const line of this.parser.readsRuns()
          ? readLineRuns(this.host, this.path, read)
          : readLineBytes(this.host, this.path, read)) {
          if ('run' in line) {
            // At most up to the first line that ends `maxBytes` past where this poll started.
            const limit = opts.maxBytes === undefined ? Infinity : from + opts.maxBytes;
            const to = line.end > limit ? line.buf.indexOf(NL, line.from + (limit - 1 - line.start)) + 1 : line.to;
            steps += this.parser.feedRun(line.buf, line.from, to, line.start, now);
            this.offset = line.start + (to - line.from);
          } else {
            if (line.complete) this.offset = line.end;
            else
              this.parser.problems.push({
                offset: line.start,
                message: 'the last line has no newline (the log was cut, or is still being written): its last value may be cut short',
              });
            if (this.parser.feedBytes(line, now) !== undefined) steps++;
          }
          if (opts.onRead && this.offset >= reported + READ_REPORT_BYTES) opts.onRead((reported = this.offset), size);
          if (!('run' in line) && line.complete && this.parser.markers().length < markers.length) {
            rescan = true;
            break;
          }
          if (
            ('run' in line || line.complete) &&
            opts.maxBytes !== undefined &&
            this.offset - from >= opts.maxBytes &&
            this.offset < size
          ) {
            more = true;
            rescan = false;
            break;
          }
        }
      } finally {
        // Also when a read failed: every line before progress.end was parsed, so the next poll need not read it again.
        this.offset = Math.max(this.offset, progress.end);
      }
    }
    if (more) return { steps, restarted, more };
    if (this.cache) await this.saveCached(this.cache, opts.final === true);
    if (opts.final) {
      if (this.parser.flush() !== undefined) steps++;
    } else if (this.parser.pendingTrl && size > this.offset) {
      // The last TRL dict's step is in the bar drawn after it, on the line still being written: read its bars only.
      const tail = await this.host.readFile(this.path, { start: this.offset, end: Math.min(size, this.offset + PEEK_BYTES) });
      if (this.parser.peekBars(tail.toString('utf8')) !== undefined) steps++;
    }
    return { steps, restarted, more };
  }

  /**
   * The first read of a big local log, split over worker threads; this thread then reads on from where they stopped
   * (what the log gained meanwhile, and an unfinished last line). A log they cannot split (TRL output, a step line torn
   * at a range's end) is read here as any other.
   */
  private async readSplit(split: SplitOptions, signal: AbortSignal | undefined): Promise<void> {
    this.split = undefined;
    if (this.offset > 0 || this.series.length > 0 || this.host.kind !== 'local') return;
    const size = (await this.host.stat(this.path)).size;
    const workers = split.workers ?? splitWorkerCount(size);
    if (size < (split.minBytes ?? SPLIT_MIN_BYTES) || workers < 2) return;
    const end = await parseInRanges(this.host, this.path, size, this.parser, { workers, signal });
    if (end !== undefined) this.offset = end;
  }

  /**
   * Before the first read: takes the cached parse of this log, if any (a big local log is first parsed into the cache on
   * another thread, where the cache can), and reads on from its offset.
   */
  private async restoreCached(cache: MetricsCache, signal: AbortSignal | undefined): Promise<void> {
    if (this.offset > 0 || this.series.length > 0) {
      this.cacheLooked = true; // a run's second source adds to what the first gave
      return;
    }
    // A host error (a dropped connection) fails this poll; the next one looks again.
    const hit = await cache.load(this.host, this.path);
    this.cacheLooked = true;
    if (hit) {
      this.take(hit);
      return;
    }
    if (!cache.canFill(this.host)) return;
    const size = (await this.host.stat(this.path)).size;
    if (size < FILL_MIN_BYTES) return;
    // A big local log is parsed into the cache on another thread, which leaves this one to its messages.
    // Stopped when the signal of the poll that started it aborts (the dashboard closed) or when takeFilled will not take it.
    const stop = new AbortController();
    signal?.addEventListener('abort', () => stop.abort(signal.reason), { once: true, signal: stop.signal });
    const filling: Filling = {
      stop,
      size,
      read: 0,
      // The worker's reports come after this object is made (they are messages).
      parse: cache
        .fill(this.host, this.path, stop.signal, (read) => {
          filling.read = Math.max(filling.read, read);
          filling.onRead?.(filling.read, size);
        })
        .then(() => (stop.signal.aborted ? undefined : cache.load(this.host, this.path))),
    };
    // Marked handled until takeFilled awaits it, which throws what it threw (a host error, as a poll's own read would).
    filling.parse.catch(() => undefined);
    this.filling = filling;
  }

  /** Takes the parse of the whole log done on another thread, in place of the rows read here so far (its first ones). */
  private async takeFilled(filling: Filling, onRead: PollOptions['onRead']): Promise<void> {
    this.filling = undefined;
    // What was read here already has problems (or is TRL output): the cache will not keep the log, so the worker's parse
    // would be wasted; it stops, and this thread reads on.
    if (!this.parser.cacheState()) {
      filling.stop.abort();
      return;
    }
    if (onRead) {
      // What was read here counts until the worker has read past it.
      filling.read = Math.max(filling.read, this.offset);
      onRead(filling.read, filling.size);
      filling.onRead = onRead;
    }
    const hit = await filling.parse;
    // Not kept (the worker failed, and the cache said why): this thread reads on from where it is.
    if (hit && hit.offset >= this.offset) this.take(hit);
  }

  /** Goes on from a cached parse of this log, in place of what was read here (nothing, or its first rows). */
  private take(hit: CachedParse): void {
    this.series.replaceWith(hit.steps, hit.observed, hit.columns);
    this.parser = new MetricLogParser(this.series);
    this.parser.restore(hit.parser);
    this.offset = this.cachedOffset = hit.offset;
  }

  /**
   * Keeps the parse so far once the log has been read to its end: a big log the first time, then as it grows by a
   * quarter (so a live run's file is rewritten a few times, not every poll), and when the run has ended.
   */
  private async saveCached(cache: MetricsCache, final: boolean): Promise<void> {
    const grown = this.offset - this.cachedOffset;
    if (this.offset < cache.minLogBytes || grown <= 0 || (!final && grown < this.cachedOffset / 4)) return;
    const state = this.parser.cacheState();
    if (!state) return;
    // Also when the write fails (the cache reported it): not tried again until the log has grown as much again.
    const at = this.offset;
    await cache.save(this.host, this.path, at, this.series, state);
    this.cachedOffset = at;
  }

  private async pollTrainerState(): Promise<PollResult> {
    const st = await this.host.stat(this.path);
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (stamp === this.stateStamp) return { steps: 0, restarted: false, more: false };
    this.stateStamp = stamp;
    const { records, problems, missing } = parseTrainerState((await this.host.readFile(this.path)).toString('utf8'), this.path);
    this.stateProblems = problems;
    this.stateMissing = missing;
    this.parser.framework = 'trl';
    for (const r of records) this.series.add(r);
    return { steps: records.length, restarted: false, more: false };
  }

  /** Metrics logged as None (not plotted): one line per metric with its count and steps. */
  notes(): string[] {
    return (this.isTrainerState ? this.stateMissing : this.parser.missing).notes();
  }

  /** The problems found so far, each with its line number (counted only now, and only when there are problems). */
  async problems(): Promise<Problem[]> {
    const lines = await lineNumbersAt(
      this.host,
      this.path,
      this.parser.problems.map((p) => p.offset),
    );
    const out: Problem[] = this.parser.problems.map((p: LineProblem, i) => ({
      host: this.host.name,
      file: this.path,
      line: lines[i],
      severity: 'warning',
      message: p.message,
      ...(p.field ? { field: p.field } : {}),
    }));
    if (this.parser.droppedProblems)
      out.push({
        host: this.host.name,
        file: this.path,
        severity: 'warning',
        message: `${this.parser.droppedProblems} more problem(s) not listed`,
      });
    return [...this.stateProblems, ...out];
  }
}

/** 1-based line numbers of byte offsets in a file, by counting newlines up to the largest one. */
async function lineNumbersAt(host: Host, path: string, offsets: number[]): Promise<number[]> {
  if (offsets.length === 0) return [];
  const order = offsets.map((o, i) => [o, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(offsets.length);
  const limit = order[order.length - 1]![0];
  const chunk = 4 << 20;
  let line = 1;
  let k = 0;
  for (let pos = 0; pos <= limit && k < order.length; pos += chunk) {
    const buf = await host.readFile(path, { start: pos, end: Math.min(pos + chunk, limit + 1) });
    for (let nl = buf.indexOf(10); ; nl = buf.indexOf(10, nl + 1)) {
      const at = nl === -1 ? pos + buf.length : pos + nl;
      while (k < order.length && order[k]![0] <= at) out[order[k++]![1]] = line;
      if (nl === -1) break;
      line++;
    }
    if (buf.length === 0) break;
  }
  while (k < order.length) out[order[k++]![1]] = line;
  return out;
}
