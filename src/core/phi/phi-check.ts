import { countsText, identifierTotal, type PhiCounts } from './phi-categories';

/** A data file with the counts of its last scan: the file as the user reads it (a relative path, or host:path). */
export interface ScannedFile {
  label: string;
  counts: PhiCounts;
}

/** `12 identifiers (8 name, 4 date)`. */
export function identifiersText(counts: PhiCounts): string {
  const total = identifierTotal(counts);
  return `${total} identifier${total === 1 ? '' : 's'} (${countsText(counts)})`;
}

/**
 * The warning shown before a dataset leaves this machine (upload) or a run trains on it (submit), or undefined when no
 * scanned file holds identifiers: "data/train.jsonl holds 12 identifiers (8 name, 4 date). Upload anyway?". One
 * function for both commands, so they say the same.
 */
export function phiWarning(files: ScannedFile[], action: 'upload' | 'submit'): string | undefined {
  const found = files.filter((f) => identifierTotal(f.counts) > 0);
  if (!found.length) return undefined;
  const held = found.map((f) => `${f.label} holds ${identifiersText(f.counts)}`).join('; ');
  return `${held}. ${action === 'upload' ? 'Upload' : 'Submit'} anyway?`;
}
