import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PHI_CATEGORIES } from '../../../src/core/phi/phi-categories';
import { phiCorpus } from './phi-corpus';
import { scorePhi } from './phi-eval';

// The README's figures come from this test's table (printed on every run).
describe('PHI detection on the evaluation corpus (MEDEC notes + PubMedQA abstracts, invented identifiers planted)', () => {
  it('finds ≥ 95% of each structured identifier, ≥ 85% of names, at ≥ 90% precision', async () => {
    const docs = await phiCorpus();
    const s = scorePhi(docs);
    const rows = PHI_CATEGORIES.map(
      (c) =>
        `  ${c.padEnd(8)} ${String(s.recall[c].found).padStart(4)} of ${String(s.recall[c].planted).padStart(4)}  recall ${s.recall[c].recall.toFixed(3)}`,
    );
    console.log(`[phi-eval] ${docs.length} documents, ${docs.reduce((n, d) => n + d.text.length, 0)} characters\n${rows.join('\n')}`);
    console.log(
      `[phi-eval] precision ${s.precision.precision.toFixed(3)} (${s.precision.correct} of ${s.precision.findings} findings overlap a planted identifier)`,
    );
    for (const c of PHI_CATEGORIES) {
      assert.ok(s.recall[c].planted >= 150, `${c}: the corpus plants at least 150`);
      const floor = c === 'name' ? 0.85 : 0.95;
      assert.ok(
        s.recall[c].recall >= floor,
        `${c}: recall ${s.recall[c].recall.toFixed(3)} < ${floor}; missed:\n${s.missed
          .filter((m) => m.startsWith(`${c}:`))
          .slice(0, 20)
          .join('\n')}`,
      );
    }
    assert.ok(
      s.precision.precision >= 0.9,
      `precision ${s.precision.precision.toFixed(3)}; false positives:\n${s.falsePositives.slice(0, 30).join('\n')}`,
    );
  });
});
