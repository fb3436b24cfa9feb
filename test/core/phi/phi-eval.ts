import { findPhi } from '../../../src/core/phi/find-phi';
import { PHI_CATEGORIES, type PhiCategory } from '../../../src/core/phi/phi-categories';
import type { CorpusDoc } from './phi-corpus';

export interface PhiScores {
  /** Per category: planted identifiers, and how many the findings cover completely (a masked half-name still leaks). */
  recall: Record<PhiCategory, { planted: number; found: number; recall: number }>;
  /** Findings that overlap a planted identifier, of all findings. */
  precision: { findings: number; correct: number; precision: number };
  /** Text of the false positives (the corpus is invented or public, so printing them is safe). */
  falsePositives: string[];
  /** Missed planted identifiers, as category and text. */
  missed: string[];
}

export function scorePhi(docs: CorpusDoc[]): PhiScores {
  const recall = Object.fromEntries(PHI_CATEGORIES.map((c) => [c, { planted: 0, found: 0, recall: 1 }])) as PhiScores['recall'];
  let findings = 0;
  let correct = 0;
  const falsePositives: string[] = [];
  const missed: string[] = [];
  for (const doc of docs) {
    const found = findPhi(doc.text);
    for (const g of doc.gold) {
      recall[g.category].planted++;
      const covered = new Uint8Array(g.end - g.start);
      for (const f of found) for (let i = Math.max(f.start, g.start); i < Math.min(f.end, g.end); i++) covered[i - g.start] = 1;
      if (covered.every((x) => x === 1)) recall[g.category].found++;
      else
        missed.push(
          `${g.category}: ${doc.text.slice(Math.max(0, g.start - 30), g.start)}[${doc.text.slice(g.start, g.end)}]${doc.text.slice(g.end, g.end + 30)}`.replace(
            /\n/g,
            ' ',
          ),
        );
    }
    for (const f of found) {
      findings++;
      if (doc.gold.some((g) => f.start < g.end && g.start < f.end)) correct++;
      else
        falsePositives.push(
          `${f.category}: ${doc.text.slice(Math.max(0, f.start - 20), f.start)}[${doc.text.slice(f.start, f.end)}]${doc.text.slice(f.end, f.end + 20)}`.replace(
            /\n/g,
            ' ',
          ),
        );
    }
  }
  for (const r of Object.values(recall)) r.recall = r.planted ? r.found / r.planted : 1;
  return { recall, precision: { findings, correct, precision: findings ? correct / findings : 1 }, falsePositives, missed };
}
