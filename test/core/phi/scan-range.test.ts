import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { newPhiSummary, openDatasetForPhi, scanDataset, type PhiHit } from '../../../src/core/phi/scan-dataset';
import { scanForPhi } from '../../../src/core/phi/scan-range';

/** Every hit and every unreadable row, in the order a scan reports them, and its summary. */
async function scanned(scan: typeof scanDataset | 'workers', path: string) {
  const host = new LocalHost();
  const reader = await openDatasetForPhi(host, path);
  const summary = newPhiSummary();
  const events: (PhiHit | string)[] = [];
  const opts = { onUnreadable: (p: string) => events.push(p) };
  for await (const hits of scan === 'workers' ? scanForPhi(host, reader, summary, opts, 2) : scan(reader, summary, opts))
    events.push(...hits);
  return { events, summary };
}

describe('scanForPhi', () => {
  it('scans a large local JSONL over worker threads with the same findings, lines and order as one thread', async () => {
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
      const one = await scanned(scanDataset, path);
      const many = await scanned('workers', path);
      assert.ok(one.summary.unreadable > 0 && one.events.length > 100_000);
      assert.deepEqual(many.summary, one.summary);
      assert.deepEqual(many.events, one.events);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
