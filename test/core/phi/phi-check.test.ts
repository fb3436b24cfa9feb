import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { identifiersText, phiWarning } from '../../../src/core/phi/phi-check';
import { countsText, identifierTotal } from '../../../src/core/phi/phi-categories';
import { ScanCountsStore, type KeyValueStore, type ScanCounts } from '../../../src/core/phi/scan-counts';

describe('phi check before upload and submit', () => {
  it('counts: most first, ties in the categories order, zero counts left out', () => {
    assert.equal(countsText({ date: 2, phone: 3, email: 0 }), '3 phone, 2 date');
    assert.equal(countsText({ date: 4, name: 8 }), '8 name, 4 date');
    assert.equal(countsText({ phone: 1, name: 1 }), '1 name, 1 phone');
    assert.equal(identifierTotal({ name: 8, date: 4 }), 12);
    assert.equal(identifiersText({ phone: 1 }), '1 identifier (1 phone)');
  });

  it('warns with each file that holds identifiers and its counts; none: no warning', () => {
    assert.equal(
      phiWarning([{ label: 'data/train.jsonl', counts: { name: 8, date: 4 } }], 'upload'),
      'data/train.jsonl holds 12 identifiers (8 name, 4 date). Upload anyway?',
    );
    assert.equal(
      phiWarning(
        [
          { label: 'data/train.jsonl', counts: { phone: 2 } },
          { label: 'gpu:/data/clean.parquet', counts: {} },
          { label: 'gpu:/data/val.parquet', counts: { email: 1 } },
        ],
        'submit',
      ),
      'data/train.jsonl holds 2 identifiers (2 phone); gpu:/data/val.parquet holds 1 identifier (1 email). Submit anyway?',
    );
    assert.equal(phiWarning([{ label: 'a.jsonl', counts: {} }], 'submit'), undefined);
    assert.equal(phiWarning([], 'upload'), undefined);
  });
});

/** workspaceState's Memento, in memory; `written` is what was stored, as JSON (what reaches the disk). */
function memento(): KeyValueStore & { written: string } {
  const m = new Map<string, unknown>();
  return {
    written: '',
    get: <T>(key: string) => m.get(key) as T | undefined,
    async update(key, value) {
      m.set(key, value);
      this.written = JSON.stringify(value);
    },
  };
}

describe('scan counts store', () => {
  const scan: ScanCounts = { size: 100, mtimeMs: 5, scannedAt: 1, rows: 3, unreadable: 0, counts: { phone: 2 } };

  it('keeps the counts while the file has the size and mtime it was scanned with', async () => {
    const store = new ScanCountsStore(memento());
    await store.set('local:/d/a.jsonl', scan);
    assert.deepEqual(await store.get('local:/d/a.jsonl', { size: 100, mtimeMs: 5 }), scan);
    assert.deepEqual(store.peek('local:/d/a.jsonl', { size: 100, mtimeMs: 5 }), scan);
    assert.equal(await store.get('local:/d/b.jsonl', { size: 100, mtimeMs: 5 }), undefined);
  });

  it('a changed file (size or mtime) drops its counts; other files keep theirs', async () => {
    const mem = memento();
    const store = new ScanCountsStore(mem);
    await store.set('local:/d/a.jsonl', scan);
    await store.set('gpu:/d/b.jsonl', { ...scan, counts: { name: 1 } });
    assert.equal(store.peek('local:/d/a.jsonl', { size: 101, mtimeMs: 5 }), undefined);
    assert.equal(await store.get('local:/d/a.jsonl', { size: 100, mtimeMs: 6 }), undefined);
    // Dropped, not only hidden: the same stat as before finds nothing now.
    assert.equal(await store.get('local:/d/a.jsonl', { size: 100, mtimeMs: 5 }), undefined);
    assert.deepEqual((await store.get('gpu:/d/b.jsonl', { size: 100, mtimeMs: 5 }))?.counts, { name: 1 });
    assert.doesNotMatch(mem.written, /a\.jsonl/);
  });

  it('stores counts and the file stat only, whatever else the caller passes', async () => {
    const mem = memento();
    const store = new ScanCountsStore(mem);
    await store.set('local:/d/a.jsonl', { ...scan, text: '617-555-0142' } as ScanCounts);
    assert.doesNotMatch(mem.written, /617-555-0142/);
    assert.deepEqual(Object.keys(JSON.parse(mem.written)['local:/d/a.jsonl']).sort(), [
      'counts',
      'mtimeMs',
      'rows',
      'scannedAt',
      'size',
      'unreadable',
    ]);
  });
});
