import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');

/**
 * The bundled CLI carries compromise's lexicon, not compromise (scripts/build.mjs): a given name alone, which only the
 * lexicon tells apart (no title, label or relative before it), is still found, and an eponym and "May" are not.
 */
describe('the bundled CLI (dist/cli.js): names from the lexicon it carries', () => {
  it('finds a given name alone and a given name and surname with no context before them, and leaves an eponym and "May" alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-lexicon-'));
    try {
      const file = join(dir, 'notes.jsonl');
      const note = 'Seen in clinic today with Margaret. Margaret Hughes was referred for a Murphy sign. May be discharged tomorrow.';
      writeFileSync(file, `${JSON.stringify({ note })}\n`);
      // Exit status 1: findings were reported (0 would mean none, and fail below).
      const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'phi', 'scan', file, '--json'], { encoding: 'utf8' });
      assert.equal(r.status, 1, r.stderr);
      const out = r.stdout;
      const findings = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { category: string; text: string; start: number; end: number });
      assert.deepEqual(
        findings.map((f) => [f.category, note.slice(f.start, f.end)]),
        // A given name alone is a name only by the lexicon (without it, only the two-word run would be found).
        [
          ['name', 'Margaret'],
          ['name', 'Margaret Hughes'],
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
