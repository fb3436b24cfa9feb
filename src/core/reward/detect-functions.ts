import type { RewardKind } from './types';

interface DetectedFunction {
  name: string;
  kind: RewardKind;
  /** 0-based line of the `def`. */
  line: number;
}

const DEF = /^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(([^)]*)\)/gm;

/**
 * Top-level reward functions in Python source, by signature: verl's (`solution_str` and `ground_truth`, or `solution_str` and `**kwargs`) or TRL's (a
 * `completions` parameter). The worker checks the same rule on the real function; this one places CodeLenses.
 */
export function detectRewardFunctions(source: string): DetectedFunction[] {
  const out: DetectedFunction[] = [];
  for (const m of source.matchAll(DEF)) {
    const params = m[2]!.split(',').map((p) =>
      p
        .trim()
        .replace(/[:=].*$/s, '')
        .replace(/^\*+/, '')
        .trim(),
    );
    const kind: RewardKind | undefined =
      params.includes('solution_str') && (params.includes('ground_truth') || m[2]!.includes('**'))
        ? 'verl'
        : params.includes('completions')
          ? 'trl'
          : undefined;
    if (!kind || m[1]!.startsWith('_')) continue;
    out.push({ name: m[1]!, kind, line: source.slice(0, m.index).split('\n').length - 1 });
  }
  return out;
}
