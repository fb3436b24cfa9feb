import { posix } from 'node:path';
import { HostFileNotFoundError, type Host } from '../remote/host';
import { catInto } from '../remote/cat-into';
import { readLines } from '../io/line-reader';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';
import { episodeKeyId, reviewRecordSchema, type ReviewRecord } from './review-record';

/** A line of a review file that is not a review: where it is and what is wrong, never its text (notes may name patients). */
export interface MalformedReview {
  file: string;
  line: number;
  message: string;
}

/** The folder of a run's reviews: one JSONL file per reviewer. */
export function reviewsDir(runDir: string): string {
  return posix.join(runDir, 'reviews');
}

/** A review, or what is wrong with it by field without the values (plainZodError quotes small ones as "got ..."). */
function parseReview(value: unknown): { record: ReviewRecord } | { problems: string } {
  const r = reviewRecordSchema.safeParse(value, { error: plainZodError });
  if (r.success) return { record: r.data };
  const problems = plainIssues(r.error.issues)
    .map((i) => `${fieldPath(i.path) || 'the record'}: ${i.message.replace(/ \(got [\s\S]*\)$/, '')}`)
    .join('; ');
  return { problems };
}

/**
 * Adds one review to `<runDir>/reviews/<reviewer>.jsonl` on the run's host (folder 0700, file 0600): appended with
 * O_APPEND, never rewritten, so every earlier verdict stays on record and the latest line wins when read.
 */
export async function appendReview(host: Host, runDir: string, record: ReviewRecord): Promise<void> {
  const checked = parseReview(record);
  if ('problems' in checked) throw new Error(`not a valid review: ${checked.problems}`);
  const parsed = checked.record;
  const dir = reviewsDir(runDir);
  await host.mkdir(dir);
  const file = posix.join(dir, `${parsed.reviewer}.jsonl`);
  const out = await catInto(host, file, { append: true });
  await out.write(Buffer.from(`${JSON.stringify(parsed)}\n`, 'utf8'));
  const r = await out.end();
  if (r.code !== 0) throw new Error(`${host.name}:${file}: could not add the review: ${r.failure}`);
}

/** Every review of a run, file by file in file order, and the lines that are not reviews (no reviews folder: none). */
export async function readReviews(host: Host, runDir: string): Promise<{ records: ReviewRecord[]; malformed: MalformedReview[] }> {
  const dir = reviewsDir(runDir);
  const entries = await host.readdir(dir).catch((err: unknown) => {
    if (err instanceof HostFileNotFoundError) return [];
    throw err;
  });
  const records: ReviewRecord[] = [];
  const malformed: MalformedReview[] = [];
  const files = entries.filter((e) => e.kind === 'file' && e.name.endsWith('.jsonl')).map((e) => e.name);
  for (const name of files.sort()) {
    const file = posix.join(dir, name);
    let line = 0;
    for await (const l of readLines(host, file, { includePartial: true })) {
      line++;
      if (!l.text.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(l.text);
      } catch {
        malformed.push({ file, line, message: l.complete ? 'not JSON' : 'not JSON (the last line has no newline: cut off?)' });
        continue;
      }
      const r = parseReview(value);
      if ('problems' in r) malformed.push({ file, line, message: r.problems });
      // The file is the reviewer's own: a line naming someone else was not written by appendReview.
      else if (`${r.record.reviewer}.jsonl` !== name)
        malformed.push({ file, line, message: `reviewer: "${r.record.reviewer}" in the file of "${name.slice(0, -'.jsonl'.length)}"` });
      else records.push(r.record);
    }
  }
  return { records, malformed };
}

/** The review in force per (reviewer, episode): the latest line, in file order (appends come last). */
export function latestReviews(records: ReviewRecord[]): ReviewRecord[] {
  const latest = new Map<string, ReviewRecord>();
  for (const r of records) {
    const key = `${r.reviewer}\0${episodeKeyId(r.episode)}`;
    // Deleting first puts the newer line at the end of the map's order.
    latest.delete(key);
    latest.set(key, r);
  }
  return [...latest.values()];
}
