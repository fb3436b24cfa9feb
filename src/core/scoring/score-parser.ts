/** How a judge's answer becomes a score. The raw answer is always kept next to it. */
export type ScoreParser =
  | { kind: 'number' }
  | { kind: 'label'; labels: Record<string, number> }
  | { kind: 'json'; field: string }
  | { kind: 'regex'; pattern: string };

interface ParsedScore {
  score: number | null;
  /** The label or JSON object found, when there is one. */
  detail: Record<string, unknown> | null;
  error: string | null;
}

/**
 * Reads a parser from its short form (medrl.yaml `parse:`, CLI `--parse`): `number`, `json:FIELD`, `regex:PATTERN`
 * (the first group is the number), `label:correct=1,incorrect=0`.
 */
export function parseScoreSpec(spec: string): ScoreParser {
  const [kind, ...restParts] = spec.split(':');
  const rest = restParts.join(':');
  if (kind === 'number' && !rest) return { kind: 'number' };
  if (kind === 'json' && rest) return { kind: 'json', field: rest };
  if (kind === 'regex' && rest) {
    new RegExp(rest); // a bad pattern fails here, with the pattern in the message
    return { kind: 'regex', pattern: rest };
  }
  if (kind === 'label' && rest) {
    const labels: Record<string, number> = {};
    for (const pair of rest.split(',')) {
      const [label, value] = pair.split('=');
      const n = Number(value);
      if (!label?.trim() || value === undefined || !Number.isFinite(n))
        throw new Error(`score parser "${spec}": "${pair}" is not LABEL=NUMBER`);
      labels[label.trim().toLowerCase()] = n;
    }
    return { kind: 'label', labels };
  }
  throw new Error(`score parser "${spec}": use number, json:FIELD, regex:PATTERN or label:NAME=VALUE,...`);
}

export function describeParser(p: ScoreParser): string {
  switch (p.kind) {
    case 'number':
      return 'number';
    case 'json':
      return `json:${p.field}`;
    case 'regex':
      return `regex:${p.pattern}`;
    case 'label':
      return `label:${Object.entries(p.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}`;
  }
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/;

function toNumber(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value.trim()) : NaN;
  return Number.isFinite(n) ? n : null;
}

/** The first JSON object in an answer (inside ```json fences or not). */
function firstJsonObject(raw: string): Record<string, unknown> | undefined {
  for (let start = raw.indexOf('{'); start >= 0; start = raw.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < raw.length; i++) {
      const c = raw[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        try {
          const v: unknown = JSON.parse(raw.slice(start, i + 1));
          if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
        } catch {
          // not JSON from this brace: try the next one
        }
        break;
      }
    }
  }
  return undefined;
}

export function parseScore(raw: string, parser: ScoreParser): ParsedScore {
  switch (parser.kind) {
    case 'number': {
      // "Score: 7" wins over other numbers in the text; otherwise the first number.
      const m = /score\s*[:=]?\s*(-?\d+(?:\.\d+)?)/i.exec(raw) ?? NUMBER.exec(raw);
      const n = m ? Number(m[1] ?? m[0]) : NaN;
      return Number.isFinite(n)
        ? { score: n, detail: null, error: null }
        : { score: null, detail: null, error: 'no number in the judge answer' };
    }
    case 'json': {
      const obj = firstJsonObject(raw);
      if (!obj) return { score: null, detail: null, error: 'no JSON object in the judge answer' };
      let value: unknown = obj;
      for (const key of parser.field.split('.'))
        value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
      const n = toNumber(value);
      return n === null
        ? {
            score: null,
            detail: obj,
            error: `JSON field "${parser.field}" is ${value === undefined ? 'missing' : `not a number (${JSON.stringify(value)})`}`,
          }
        : { score: n, detail: obj, error: null };
    }
    case 'regex': {
      const m = new RegExp(parser.pattern, 'i').exec(raw);
      if (!m) return { score: null, detail: null, error: `the judge answer does not match /${parser.pattern}/` };
      const n = toNumber(m[1] ?? m[0]);
      return n === null
        ? { score: null, detail: { match: m[0] }, error: `/${parser.pattern}/ matched "${m[1] ?? m[0]}", not a number` }
        : { score: n, detail: { match: m[0] }, error: null };
    }
    case 'label': {
      // The label that appears first, as a whole word ("incorrect" does not count as "correct").
      let best: { label: string; at: number } | undefined;
      for (const label of Object.keys(parser.labels)) {
        const m = new RegExp(`(?<![\\w-])${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`, 'i').exec(raw);
        if (m && (!best || m.index < best.at)) best = { label, at: m.index };
      }
      return best
        ? { score: parser.labels[best.label]!, detail: { label: best.label }, error: null }
        : { score: null, detail: null, error: `none of the labels ${Object.keys(parser.labels).join(', ')} in the judge answer` };
    }
  }
}
