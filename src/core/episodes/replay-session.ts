import type { Episode, ExtraValue, MalformedRecord, Turn } from './episode';
import type { EpisodeCollection } from './discover';
import type { EpisodeFile } from './episode-file';
import { FLAG_EMPTY, FLAG_NO_EOS, FLAG_UNCLOSED, type EpisodeTable } from './episode-table';
import { filterRows, sortRows, type EpisodeFilter, type EpisodeSort } from './query';
import { groupStats, stepSignals, type GroupStats, type StepSignals } from './signals';
import { recordPlace } from '../format/row-line';

/** Text longer than this is cut in what the viewer receives (the raw file keeps it whole). */
const MAX_TEXT = 200_000;

export interface StepRef {
  collection: string;
  step: number;
}

interface StepInfo extends StepRef {
  file: string;
  indexed: boolean;
  episodes: number;
  malformed: MalformedRecord[];
  signals?: StepSignals;
}

interface EpisodeRow {
  index: number;
  score: number | null;
  length: number;
  dataSource: string | null;
  group: number;
  groupSize: number;
  advantage: number | null;
  flags: string[];
  extra: Record<string, ExtraValue>;
}

export interface EpisodeQuery extends StepRef {
  text?: string;
  minScore?: number;
  maxScore?: number;
  dataSource?: string;
  extraKey?: string;
  extraValue?: string;
  flagged?: boolean;
  sort: EpisodeSort;
  offset: number;
  count: number;
}

interface EpisodePage {
  total: number;
  /** Episodes in the step before filtering (as far as indexed). */
  all: number;
  offset: number;
  rows: EpisodeRow[];
  extraKeys: string[];
  dataSources: string[];
  indexing: boolean;
}

interface EpisodeView extends StepRef {
  index: number;
  score: number | null;
  turns: Turn[];
  groundTruth: string;
  dataSource: string | null;
  extra: Record<string, string>;
  raw: { prompt: string; response: string };
  location: string;
  advantage: number | null;
  flags: string[];
  group: (Omit<GroupStats, 'members'> & { members: { index: number; score: number | null; advantage: number | null }[] }) | null;
}

interface CompareView extends StepRef {
  index: number;
  prompt: string;
  steps: {
    step: number;
    episodes: { index: number; score: number | null; advantage: number | null; response: string; flags: string[] }[];
  }[];
  pendingSteps: number;
}

interface PlaygroundSample {
  data_source: string;
  solution_str: string;
  ground_truth: string;
  extra_info: Record<string, unknown>;
}

function capText(s: string, max = MAX_TEXT): string {
  return s.length <= max ? s : `${s.slice(0, max)}\n… [${(s.length - max).toLocaleString('en')} more characters not shown]`;
}

function capTurns(turns: Turn[]): Turn[] {
  return turns.map((t) => ({ ...t, content: capText(t.content), parts: t.parts.map((p) => ({ ...p, text: capText(p.text) })) }));
}

function show(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v, null, 2);
}

function nullable(n: number): number | null {
  return Number.isNaN(n) ? null : n;
}

function flagNames(t: EpisodeTable, i: number, signals?: StepSignals): string[] {
  const f = t.flags[i]!;
  const out: string[] = [];
  if (f & FLAG_EMPTY) out.push('empty');
  if (f & FLAG_UNCLOSED) out.push('unclosed tag');
  if (f & FLAG_NO_EOS) out.push('no end-of-turn token');
  if (signals && signals.atLengthCap && t.responseLength[i]! >= maxLength(t) * 0.97) out.push('at length cap');
  return out;
}

const maxLens = new WeakMap<EpisodeTable, { n: number; max: number }>();
function maxLength(t: EpisodeTable): number {
  const c = maxLens.get(t);
  if (c && c.n === t.length) return c.max;
  let max = 0;
  for (let i = 0; i < t.length; i++) max = Math.max(max, t.responseLength[i]!);
  maxLens.set(t, { n: t.length, max });
  return max;
}

/**
 * What the replay viewer asks of a set of collections (a run's rollouts and validation, a folder, a file): steps and their
 * signals, pages of the filtered and sorted episode list, one episode, the same prompt across steps, playground samples.
 * Filtering and sorting happen here on the index, so the webview only ever holds one page.
 */
export class ReplaySession {
  private readonly signalsCache = new Map<EpisodeFile, { n: number; s: StepSignals }>();
  private readonly searchCache = new Map<EpisodeFile, { q: string; n: number; hits: Uint8Array }>();
  private lastQuery: { key: string; file: EpisodeFile; rows: Int32Array } | undefined;
  private readonly indexing = new Set<EpisodeFile>();

  constructor(readonly collections: EpisodeCollection[]) {}

  file(ref: StepRef): EpisodeFile {
    const c = this.collections.find((x) => x.name === ref.collection);
    const f = c?.files.find((x) => x.step === ref.step);
    if (!f) throw new Error(`no step ${ref.step} in ${ref.collection}`);
    return f;
  }

  steps(): StepInfo[] {
    return this.collections.flatMap((c) => c.files.map((f) => this.stepInfo(c.name, f)));
  }

  stepInfo(collection: string, f: EpisodeFile): StepInfo {
    const t = f.partial();
    const indexed = !this.indexing.has(f) && t.length > 0;
    return {
      collection,
      step: f.step,
      file: f.path,
      indexed,
      episodes: t.length,
      malformed: f.malformed.slice(0, 50),
      ...(indexed ? { signals: this.signals(f) } : {}),
    };
  }

  signals(f: EpisodeFile): StepSignals {
    const t = f.partial();
    const c = this.signalsCache.get(f);
    if (c && c.n === t.length) return c.s;
    const s = stepSignals(t);
    this.signalsCache.set(f, { n: t.length, s });
    return s;
  }

  /** Indexes one step (progress while it runs); the list can page through what is indexed so far. */
  async indexStep(
    ref: StepRef,
    opts: { signal?: AbortSignal; onProgress?: (episodes: number, bytes: number, total: number) => void } = {},
  ): Promise<StepInfo> {
    const f = this.file(ref);
    this.indexing.add(f);
    try {
      await f.index({ signal: opts.signal, onProgress: (p) => opts.onProgress?.(p.episodes, p.bytes, p.totalBytes) });
    } finally {
      this.indexing.delete(f);
    }
    return this.stepInfo(ref.collection, f);
  }

  async first(ref: StepRef): Promise<Episode | undefined> {
    return this.file(ref).first();
  }

  async query(q: EpisodeQuery, signal?: AbortSignal): Promise<EpisodePage> {
    const f = this.file(q);
    const t = f.partial();
    const filter: EpisodeFilter = {
      ...(q.minScore !== undefined ? { minScore: q.minScore } : {}),
      ...(q.maxScore !== undefined ? { maxScore: q.maxScore } : {}),
      ...(q.dataSource ? { dataSource: q.dataSource } : {}),
      ...(q.extraKey ? { extra: { key: q.extraKey, value: q.extraValue?.trim() || '*' } } : {}),
      ...(q.flagged ? { flagged: true } : {}),
    };
    if (q.text?.trim()) filter.textHits = await this.search(f, q.text.trim(), signal);
    const key = JSON.stringify({ ...q, offset: 0, count: 0, n: t.length, file: f.path });
    let rows = this.lastQuery?.key === key ? this.lastQuery.rows : undefined;
    if (!rows) {
      rows = sortRows(t, filterRows(t, filter), q.sort);
      this.lastQuery = { key, file: f, rows };
    }
    const signals = t.length ? this.signals(f) : undefined;
    const page: EpisodeRow[] = [];
    for (let k = q.offset; k < Math.min(rows.length, q.offset + q.count); k++) page.push(this.row(t, rows[k]!, signals));
    const dataSources: string[] = [];
    const seen = new Set<number>();
    for (let i = 0; i < t.length; i++) {
      const d = t.dataSource[i]!;
      if (d >= 0 && !seen.has(d)) {
        seen.add(d);
        dataSources.push(t.str(d)!);
      }
    }
    return {
      total: rows.length,
      all: t.length,
      offset: q.offset,
      rows: page,
      extraKeys: [...t.extras.keys()],
      dataSources: dataSources.sort(),
      indexing: this.indexing.has(f),
    };
  }

  private async search(f: EpisodeFile, q: string, signal?: AbortSignal): Promise<Uint8Array> {
    const n = f.partial().length;
    const c = this.searchCache.get(f);
    if (c && c.q === q && c.n === n) return c.hits;
    const hits = await f.search(q, signal);
    this.searchCache.set(f, { q, n, hits });
    return hits;
  }

  private row(t: EpisodeTable, i: number, signals?: StepSignals): EpisodeRow {
    const extra: Record<string, ExtraValue> = {};
    for (const k of t.extras.keys()) {
      const v = t.extra(k, i);
      if (v !== undefined) extra[k] = v;
    }
    return {
      index: i,
      score: nullable(t.score[i]!),
      length: t.responseLength[i]!,
      dataSource: t.str(t.dataSource[i]!) ?? null,
      group: t.group[i]!,
      groupSize: t.groupSize(t.group[i]!),
      advantage: nullable(t.advantageOf(i)),
      flags: flagNames(t, i, signals),
      extra,
    };
  }

  async episode(ref: StepRef, index: number): Promise<EpisodeView> {
    const f = this.file(ref);
    const t = f.partial();
    const ep = index < t.length ? await f.read(index) : index === 0 ? await f.first() : undefined;
    if (!ep) throw new Error(`${f.path}: no episode ${index}`);
    const extra: Record<string, string> = {};
    for (const [k, v] of Object.entries(ep.extra)) extra[k] = capText(show(v), 20_000);
    let group: EpisodeView['group'] = null;
    if (index < t.length) {
      const stats = groupStats(t, t.group[index]!);
      group = {
        ...stats,
        members: stats.members.map((j) => ({ index: j, score: nullable(t.score[j]!), advantage: nullable(t.advantageOf(j)) })),
      };
    }
    const loc = ep.location;
    return {
      ...ref,
      index,
      score: ep.score,
      turns: capTurns(ep.turns),
      groundTruth: capText(show(ep.groundTruth)),
      dataSource: ep.dataSource ?? null,
      extra,
      raw: { prompt: capText(ep.raw.prompt), response: capText(ep.raw.response) },
      location: `${f.host.name}:${recordPlace(loc.file, loc)}`,
      advantage: index < t.length ? nullable(t.advantageOf(index)) : (ep.advantage ?? null),
      flags: index < t.length ? flagNames(t, index, this.signals(f)) : [],
      group,
    };
  }

  /** The same prompt at every step of the collection where it appears (indexed steps), its responses side by side. */
  async compare(ref: StepRef, index: number, maxSteps = 40, perStep = 8): Promise<CompareView> {
    const f = this.file(ref);
    const t = f.partial();
    if (index >= t.length) throw new Error(`${f.path}: episode ${index} is not indexed yet`);
    const key = t.promptKey[index]!;
    const ep = await f.read(index);
    const c = this.collections.find((x) => x.name === ref.collection)!;
    const steps: CompareView['steps'] = [];
    let pending = 0;
    for (const file of c.files) {
      const ft = file.partial();
      if (this.indexing.has(file) || !ft.length) {
        pending++;
        continue;
      }
      const idx: number[] = [];
      for (let i = 0; i < ft.length && idx.length < perStep; i++) if (ft.promptKey[i] === key) idx.push(i);
      if (!idx.length) continue;
      const sig = this.signals(file);
      const episodes = [];
      for (const i of idx) {
        const e = await file.read(i);
        const last = [...e.turns].reverse().find((x) => x.role === 'assistant');
        episodes.push({
          index: i,
          score: e.score,
          advantage: nullable(ft.advantageOf(i)),
          response: capText(last?.content ?? e.raw.response, 8000),
          flags: flagNames(ft, i, sig),
        });
      }
      steps.push({ step: file.step, episodes });
      if (steps.length >= maxSteps) break;
    }
    const userTurn = ep.turns.find((x) => x.role === 'user');
    return { ...ref, index, prompt: capText(userTurn?.content ?? ep.raw.prompt, 4000), steps, pendingSteps: pending };
  }

  /** Samples for the reward playground: one episode, or the last query's rows (at most `max`). */
  async playgroundSamples(ref: StepRef, index: number | undefined, max = 500): Promise<PlaygroundSample[]> {
    const f = this.file(ref);
    if (index === undefined && this.lastQuery?.file !== f)
      throw new Error(`step ${ref.step} of ${ref.collection} has no filtered list yet`);
    const rows = index !== undefined ? [index] : [...this.lastQuery!.rows.subarray(0, max)];
    const out: PlaygroundSample[] = [];
    for (const i of rows) {
      const e = await f.read(i);
      out.push({
        data_source: e.dataSource ?? 'unknown',
        solution_str: e.raw.response,
        ground_truth: typeof e.groundTruth === 'string' ? e.groundTruth : JSON.stringify(e.groundTruth ?? null),
        extra_info: {
          step: e.step,
          index: e.index,
          score: e.score,
          file: e.location.file,
          ...(e.location.line !== undefined ? { line: e.location.line } : { row: e.location.row }),
        },
      });
    }
    return out;
  }
}
