import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { newPhiSummary, openDatasetForPhi, type PhiHit } from '../../../src/core/phi/scan-dataset';
import type { FindingFormat } from '../../../src/core/phi/finding-lines';
import { scanForPhi } from '../../../src/core/phi/scan-range';

/** What a scan writes, with each unreadable row's problem in its place among the findings' lines, and its summary. */
async function scanned(path: string, workers: number, format?: FindingFormat) {
  const host = new LocalHost();
  const reader = await openDatasetForPhi(host, path);
  const summary = newPhiSummary();
  let written = '';
  const opts = { format, onUnreadable: (p: string) => (written += `unreadable: ${p}\n`) };
  // Bytes (from worker threads) are the scan's again once the next batch is asked for: decoded before that.
  for await (const text of scanForPhi(host, reader, summary, opts, workers))
    written += typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  return { written, summary };
}

/** assert.equal's diff of two outputs of 10 MB runs for minutes: the first line that differs says what is wrong. */
function sameOutput(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  const a = actual.split('\n');
  const e = expected.split('\n');
  let i = 0;
  while (i < a.length && a[i] === e[i]) i++;
  assert.fail(
    `${what}: output line ${i + 1} is ${JSON.stringify(a[i])}, expected ${JSON.stringify(e[i])} (${a.length} lines, expected ${e.length})`,
  );
}

describe('scanForPhi', () => {
  it('scans a large local JSONL over worker threads and writes the same findings, lines, order and counts as one thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-phi-range-'));
    try {
      const rows: string[] = ['\ufeff{"note": "Seen by Dr. Emily Chen on 03/14/2021."}'];
      // About 20 MB, so several ranges: blank lines, a malformed row and rows of several lengths cross the range ends.
      for (let i = 0; rows.length < 90_000; i++) {
        if (i % 997 === 0) rows.push('');
        if (i % 20_011 === 0) rows.push('{"note": "call 617-555-0142"');
        rows.push(
          JSON.stringify({
            id: i,
            note: `${'Chest pain, BP 142/91, HR 88. '.repeat(i % 13)}Call (617) 555-${String(i % 10_000).padStart(4, '0')}, MRN ${10_000_000 + i}.`,
            extra: [{ content: i % 7 ? 'no identifiers' : `fax: 617-555-0199, jsmith${i}@example.org` }],
          }),
        );
      }
      const path = join(dir, 'notes.jsonl');
      writeFileSync(path, `${rows.join('\n')}\n{"note": "Patient: John Smith"}`);
      for (const format of ['json', 'table', undefined] as const) {
        const one = await scanned(path, 1, format);
        const many = await scanned(path, 3, format);
        assert.ok(one.summary.unreadable > 0 && one.summary.counts.phone! > 80_000, JSON.stringify(one.summary));
        assert.deepEqual(many.summary, one.summary);
        // Keys in the same order too: the CLI prints the counts object as it is.
        assert.deepEqual(Object.keys(many.summary.counts), Object.keys(one.summary.counts));
        sameOutput(many.written, one.written, `format ${format}`);
        if (format === 'json') {
          // Line numbers are the file's (a BOM, blank lines and a malformed row before them), in both.
          const last = JSON.parse(many.written.trimEnd().split('\n').pop()!) as PhiHit;
          assert.deepEqual([last.line, last.field, last.category, last.text], [rows.length + 1, 'note', 'name', 'John Smith']);
          assert.ok(many.written.includes('unreadable: line '));
        } else if (format === undefined) assert.equal(many.written.split('\n').length, one.summary.unreadable + 1);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
