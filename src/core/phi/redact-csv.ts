import { StringDecoder } from 'node:string_decoder';
import type { Host } from '../remote/host';
import type { PhiCategory } from './phi-categories';
import { redactText } from './redact-text';
import { unusedName } from './value-strings';
import { countFinding, type PhiSummary } from './scan-dataset';
import type { PrivateOutput } from './private-output';

const QUOTE = 34;
const NL = 10;

/**
 * The raw records of a CSV file, each with its line break, as read in chunks: a quoted field may hold commas, quotes and
 * line breaks, so a record ends at a newline outside quotes. Memory holds one record at a time.
 */
async function* csvRecords(host: Host, path: string): AsyncGenerator<{ raw: string; line: number }> {
  const decoder = new StringDecoder('utf8');
  let buf = '';
  let scanned = 0;
  let inQuotes = false;
  let line = 1;
  let next = 1;
  const take = function* (text: string) {
    buf += text;
    let start = 0;
    for (let i = scanned; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c === QUOTE) inQuotes = !inQuotes;
      else if (c === NL) {
        next++;
        if (inQuotes) continue;
        yield { raw: buf.slice(start, i + 1), line };
        [start, line] = [i + 1, next];
      }
    }
    buf = buf.slice(start);
    scanned = buf.length;
  };
  for await (const chunk of host.readChunks(path)) yield* take(decoder.write(chunk));
  yield* take(decoder.end());
  if (inQuotes) throw new Error(`${host.name}:${path}:${line}: a quoted field is never closed`);
  if (buf) yield { raw: buf, line };
}

/** The fields of one raw record: where each is in the text (quotes included) and its value. */
function* fieldsOf(raw: string): Generator<{ pos: number; stop: number; quoted: boolean; value: string }> {
  const eol = raw.endsWith('\r\n') ? 2 : raw.endsWith('\n') ? 1 : 0;
  const end = raw.length - eol;
  for (let pos = 0; pos <= end;) {
    const quoted = raw.charCodeAt(pos) === QUOTE;
    let stop: number;
    let value: string;
    if (quoted) {
      let j = pos + 1;
      for (; j < end; j++) if (raw.charCodeAt(j) === QUOTE) if (raw.charCodeAt(++j) !== QUOTE) break;
      stop = Math.min(j, end);
      value = raw.slice(pos + 1, stop - 1).replace(/""/g, '"');
    } else {
      const comma = raw.indexOf(',', pos);
      stop = comma === -1 || comma > end ? end : comma;
      value = raw.slice(pos, stop);
    }
    yield { pos, stop, quoted, value };
    pos = stop + 1;
  }
}

/**
 * One raw record with each field that holds PHI rewritten (quoted as CSV needs); other fields stay as written. In the
 * header (`names`: its column names as written) a redacted name equal to another is numbered (`[NAME] 2`), so no two
 * columns share a name in the copy.
 */
function redactRecord(raw: string, onFinding: (category: PhiCategory) => void, names?: Set<string>): string {
  let out = '';
  let copied = 0;
  for (const { pos, stop, quoted, value } of fieldsOf(raw)) {
    const { text: redacted, categories } = redactText(value);
    if (categories.length) {
      categories.forEach(onFinding);
      const text = names ? unusedName(redacted, names) : redacted;
      const field = quoted || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
      out += raw.slice(copied, pos) + field;
      copied = stop;
    }
  }
  return copied === 0 ? raw : out + raw.slice(copied);
}

/** Copies a CSV file with PHI redacted in its header (column names) and data rows. */
export async function redactCsv(host: Host, path: string, out: PrivateOutput, summary: PhiSummary): Promise<void> {
  let header = true;
  for await (const { raw } of csvRecords(host, path)) {
    if (raw.trim() === '') {
      // Blank lines (before the header too) are copied as they are; the first other record is the header.
      await out.write(raw);
      continue;
    }
    const count = (c: PhiCategory) => countFinding(summary, c);
    if (header) {
      header = false;
      await out.write(redactRecord(raw, count, new Set([...fieldsOf(raw)].map((f) => f.value))));
      continue;
    }
    summary.rows++;
    await out.write(redactRecord(raw, count));
  }
}
