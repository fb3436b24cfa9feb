import { terminalText } from '../format/terminal-text';
import type { PhiHit } from './scan-dataset';

/**
 * How `medrl phi scan` writes its findings: one JSON object per line (`--json`), or a table's rows. They are written where
 * the scan runs, in its worker threads too (scan-range.ts): handing 2 M findings to the main thread as objects and writing
 * them there cost a fifth of a threaded scan's CPU time.
 */
export type FindingFormat = 'json' | 'table';

/** The table's header line (the table's rows are findingLines' 'table'). */
export const FINDING_TABLE_HEADER = `${'line'.padStart(7)}  ${'category'.padEnd(8)}  ${'field'.padEnd(24)}  text\n`;

/** The lines of `hits` in `format`, each ending in a newline. */
export function findingLines(hits: readonly PhiHit[], format: FindingFormat): string {
  let out = '';
  for (const h of hits) out += `${format === 'json' ? jsonLine(h) : tableRow(h)}\n`;
  return out;
}

function jsonLine(h: PhiHit): string {
  return JSON.stringify({ line: h.line, field: h.field, category: h.category, text: h.text, start: h.start, end: h.end, key: h.key });
}

/** Control characters in a field or the text found are shown escaped (terminalText): a row's text cannot drive the terminal. */
function tableRow(h: PhiHit): string {
  return terminalText(
    `${String(h.line).padStart(7)}  ${h.category.padEnd(8)}  ${(h.key ? `${h.field} (key)` : h.field).padEnd(24)}  ${h.text}`,
  );
}
