import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './run-cli';

const PHONE = '555-123-4567';

describe('medrl phi', () => {
  const dir = mkdtempSync(join(tmpdir(), 'medrl-cli-phi-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'notes.jsonl'),
    `${JSON.stringify({ note: 'nothing' })}\n${JSON.stringify({ prompt: [{ role: 'user', content: `Call ${PHONE}.` }], note: 'x' })}\n`,
  );
  writeFileSync(join(dir, 'clean.jsonl'), `${JSON.stringify({ note: 'nothing' })}\n`);

  it('scan --json prints one finding per line on stdout, the counts on stderr, and exits 1', async () => {
    const r = await run(['phi', 'scan', 'notes.jsonl', '--json'], dir);
    assert.equal(r.code, 1, r.err);
    const phones = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((f) => f.category === 'phone');
    assert.deepEqual(phones, [{ line: 2, field: 'prompt[0].content', category: 'phone', text: PHONE, start: 5, end: 17 }]);
    const summary = JSON.parse(r.err) as { rows: number; counts: Record<string, number> };
    assert.equal(summary.rows, 2);
    assert.equal(summary.counts.phone, 1);
    assert.ok(!r.err.includes(PHONE), 'stderr has counts only');
  });

  it('scan prints a table; its summary on stderr has no found text', async () => {
    const r = await run(['phi', 'scan', 'notes.jsonl'], dir);
    assert.equal(r.code, 1);
    assert.match(r.out, /^ +line {2}category {2}field +text$/m);
    assert.match(r.out, new RegExp(`^ +2 {2}phone +prompt\\[0\\]\\.content +${PHONE}$`, 'm'));
    assert.match(r.err, /notes\.jsonl: 2 row\(s\): .*phone 1/);
    assert.ok(!r.err.includes(PHONE));
  });

  it('scan finds identifiers in object keys and says so: key: true with --json, (key) in the table', async () => {
    writeFileSync(join(dir, 'keys.jsonl'), `${JSON.stringify({ contacts: { [PHONE]: 'mother' } })}\n`);
    const j = await run(['phi', 'scan', 'keys.jsonl', '--json'], dir);
    assert.equal(j.code, 1, j.err);
    assert.deepEqual(JSON.parse(j.out), {
      line: 1,
      field: `contacts.${PHONE}`,
      category: 'phone',
      text: PHONE,
      start: 0,
      end: 12,
      key: true,
    });
    const t = await run(['phi', 'scan', 'keys.jsonl'], dir);
    assert.match(t.out, new RegExp(`^ +1 {2}phone +contacts\\.${PHONE} \\(key\\) +${PHONE}$`, 'm'));
  });

  it('scan exits 0 when nothing is found, 2 on bad usage, 1 when the file is missing', async () => {
    const clean = await run(['phi', 'scan', 'clean.jsonl'], dir);
    assert.equal(clean.code, 0, clean.err);
    assert.match(clean.err, /1 row\(s\): no PHI found/);
    assert.equal((await run(['phi', 'scan'], dir)).code, 2);
    assert.equal((await run(['phi', 'scan', 'a.jsonl', 'b.jsonl'], dir)).code, 2);
    assert.equal((await run(['phi', 'scan', 'notes.jsonl', '--host', 'nowhere'], dir)).code, 2);
    const missing = await run(['phi', 'scan', 'missing.jsonl'], dir);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /no such file/);
  });

  it('redact writes a 0600 copy without the phone and prints counts only; --out is required and cannot be FILE', async () => {
    const r = await run(['phi', 'redact', 'notes.jsonl', '--out', 'out/notes.jsonl'], dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /wrote out\/notes\.jsonl: 2 row\(s\), redacted: .*phone 1/);
    assert.ok(!r.out.includes(PHONE) && !r.err.includes(PHONE));
    const written = readFileSync(join(dir, 'out/notes.jsonl'), 'utf8');
    assert.ok(!written.includes(PHONE));
    assert.ok(written.includes('Call [PHONE].'));
    assert.equal(statSync(join(dir, 'out/notes.jsonl')).mode & 0o777, 0o600);
    const j = await run(['phi', 'redact', 'notes.jsonl', '--out', 'out/j.jsonl', '--json'], dir);
    assert.equal((JSON.parse(j.out) as { counts: Record<string, number> }).counts.phone, 1);
    assert.equal((await run(['phi', 'redact', 'notes.jsonl'], dir)).code, 2);
    const same = await run(['phi', 'redact', 'notes.jsonl', '--out', `${dir}/notes.jsonl`], dir);
    assert.equal(same.code, 2);
    assert.match(same.err, /is the input file itself/);
  });

  it('scan reports a row it cannot read by its line, without its text, and exits 1', async () => {
    writeFileSync(join(dir, 'bad.jsonl'), `{"note": "${PHONE}", oops}\n`);
    const r = await run(['phi', 'scan', 'bad.jsonl'], dir);
    assert.equal(r.code, 1);
    assert.match(r.err, /bad\.jsonl: line 1 \(byte offset 0\): malformed JSON.*\(not scanned\)/);
    assert.match(r.err, /1 row\(s\), 1 could not be read: no PHI found/);
    const j = await run(['phi', 'scan', 'bad.jsonl', '--json'], dir);
    const lines = j.err
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { unreadable?: string; rows?: number });
    assert.match(lines[0]!.unreadable!, /^line 1 /);
    assert.equal(lines[1]!.rows, 1);
    assert.ok(!r.err.includes(PHONE) && !j.err.includes(PHONE) && j.out === '');
  });

  it('scan over worker threads (two by default, --threads N) gives the same findings and counts as --threads 1; bad --threads is usage', async () => {
    // 17 MB of notes (workers start at 16 MB), a planted phone every 500 rows, and one in a key every 1000.
    const rows = Array.from({ length: 100_000 }, (_, i) =>
      JSON.stringify({
        id: i,
        note: `Seen on day ${i % 30}; vitals stable.${i % 500 === 0 ? ` Call ${PHONE}.` : ''} ${'x'.repeat(120)}`,
        ...(i % 1000 === 0 ? { contacts: { [PHONE]: 'mother' } } : {}),
      }),
    );
    writeFileSync(join(dir, 'big.jsonl'), `${rows.join('\n')}\n`);
    assert.ok(statSync(join(dir, 'big.jsonl')).size > 16 << 20);
    const one = await run(['phi', 'scan', 'big.jsonl', '--json', '--threads', '1'], dir);
    assert.equal(one.code, 1, one.err);
    assert.equal(one.out.trim().split('\n').length, 300);
    assert.equal(one.out.split('"key":true').length - 1, 100);
    for (const threads of [[], ['--threads', '3']]) {
      const many = await run(['phi', 'scan', 'big.jsonl', '--json', ...threads], dir);
      assert.equal(many.code, 1, many.err);
      assert.equal(many.out, one.out);
      assert.equal(many.err, one.err);
    }
    for (const bad of ['0', 'two', '1.5']) {
      const r = await run(['phi', 'scan', 'big.jsonl', '--threads', bad], dir);
      assert.equal(r.code, 2);
      assert.match(r.err, /--threads takes a whole number from 1 up, or auto/);
    }
  });

  it('--help states the exit codes', async () => {
    const r = await run(['phi', 'scan', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /0 nothing found, 1 findings/);
  });
});
