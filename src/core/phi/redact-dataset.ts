import { posix } from 'node:path';
import { readLineBytes } from '../io/line-reader';
import { parseJsonLine } from '../io/json-line';
import { HostFileNotFoundError, type Host } from '../remote/host';
import { datasetFormatOf } from '../datasets/dataset-reader';
import { redactJsonText } from './redact-json-text';
import { redactCsv } from './redact-csv';
import { redactParquet } from './redact-parquet';
import { openPrivateOutput, type PrivateOutput } from './private-output';
import { countFinding, newPhiSummary, type PhiSummary } from './scan-dataset';

/** JSON is parsed whole (as the dataset reader does); above this, JSONL or parquet is the way. */
const MAX_JSON_BYTES = 256 * 1024 * 1024;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** OUT names FILE itself: redacting in place would lose the original if anything went wrong. */
export class SameFileError extends Error {}

/**
 * Writes a copy of a dataset with each PHI finding replaced by its placeholder (`[PHONE]`), on the same host, mode 0600,
 * under a temporary name renamed when complete. JSONL, JSON and CSV keep every other byte; parquet keeps every value.
 * A row that cannot be read stops the redaction (it may hold PHI that cannot be found): nothing is written then.
 */
export async function redactDataset(host: Host, file: string, outPath: string): Promise<PhiSummary> {
  const format = datasetFormatOf(file);
  if (!format) throw new Error(`${host.name}:${file}: not a dataset file (expected .json, .jsonl, .parquet or .csv)`);
  const [src, dst] = await Promise.all([host.resolvePath(file), host.resolvePath(outPath)]);
  if (posix.normalize(src) === posix.normalize(dst))
    throw new SameFileError(`--out ${outPath} is the input file itself: give another path`);
  const { kind, size } = await host.stat(file);
  if (kind !== 'file') throw new Error(`${host.name}:${file}: not a file`);
  const existing = await host.stat(outPath).catch((err: unknown) => {
    if (err instanceof HostFileNotFoundError) return undefined;
    throw err;
  });
  if (existing && existing.kind !== 'file') throw new Error(`${host.name}:${outPath}: is a folder, not a file`);
  const summary = newPhiSummary();
  const out = await openPrivateOutput(host, outPath);
  try {
    if (format === 'jsonl') await redactJsonl(host, file, out, summary);
    else if (format === 'json') await redactJson(host, file, size, out, summary);
    else if (format === 'csv') await redactCsv(host, file, out, summary);
    else await redactParquet(host, file, size, out, summary);
  } catch (err) {
    await out.abort();
    throw err;
  }
  await out.commit();
  return summary;
}

/** Line by line: a line without findings is copied byte for byte (line break and byte order mark included). */
async function redactJsonl(host: Host, file: string, out: PrivateOutput, summary: PhiSummary): Promise<void> {
  let line = 0;
  for await (const l of readLineBytes(host, file, { includePartial: true, readAhead: 2 })) {
    line++;
    const eol = !l.complete ? '' : l.buf[l.to] === 0x0d ? '\r\n' : '\n';
    // readLineBytes leaves a byte order mark out of the first line's bytes; the copy keeps it.
    if (l.start === 0 && l.end - l.start - (l.to - l.from) - eol.length === BOM.length) await out.write(BOM);
    const text = l.buf.toString('utf8', l.from, l.to);
    if (text.trim() === '') {
      await out.write(l.buf.subarray(l.from, l.to));
    } else {
      summary.rows++;
      // Only its strings are rewritten, as text: any depth will do, and Python's NaN stays as written.
      const { error } = parseJsonLine(text, Infinity);
      if (error !== undefined) throw new Error(`${host.name}:${file}:${line}: ${error}, so it cannot be redacted`);
      const redacted = redactJsonText(text, (c) => countFinding(summary, c));
      await out.write(redacted === text ? l.buf.subarray(l.from, l.to) : redacted);
    }
    await out.write(eol);
  }
}

/** A JSON file is read whole; its rows are counted as the dataset reader does (array items, or the top object's values). */
async function redactJson(host: Host, file: string, size: number, out: PrivateOutput, summary: PhiSummary): Promise<void> {
  if (size > MAX_JSON_BYTES)
    throw new Error(`${host.name}:${file}: a JSON file of ${size} bytes is too large to read whole (limit ${MAX_JSON_BYTES}); use JSONL`);
  const raw = (await host.readFile(file)).toString('utf8');
  const bom = raw.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
  const text = raw.slice(bom.length);
  const { value: doc, error } = parseJsonLine(text, Infinity);
  if (error !== undefined) throw new Error(`${host.name}:${file}: ${error}, so it cannot be redacted`);
  summary.rows = jsonRowCount(doc);
  await out.write(bom + redactJsonText(text, (c) => countFinding(summary, c)));
}

function jsonRowCount(doc: unknown): number {
  if (Array.isArray(doc)) return doc.length;
  if (typeof doc !== 'object' || doc === null) return 0;
  const values = Object.values(doc);
  return values.every(Array.isArray) ? values.reduce((n: number, v: unknown[]) => n + v.length, 0) : values.length;
}
