import { findPhi } from './find-phi';
import { phiPlaceholder, type PhiFinding } from './phi-categories';

/** `text` with each finding replaced by its placeholder (`[PHONE]`), and the findings (offsets into the original). */
export function redactText(text: string): { text: string; findings: PhiFinding[] } {
  const findings = findPhi(text);
  if (findings.length === 0) return { text, findings };
  let out = '';
  let at = 0;
  for (const f of findings) {
    out += text.slice(at, f.start) + phiPlaceholder(f.category);
    at = f.end;
  }
  return { text: out + text.slice(at), findings };
}
