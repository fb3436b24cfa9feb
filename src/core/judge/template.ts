import type { RewardSample } from '../scoring/sample';

/** The variables a judge prompt template can use for a sample: its fields, `extra_info.*`, and its other columns. */
export function sampleVariables(sample: RewardSample): Record<string, unknown> {
  const prompt = Array.isArray(sample.prompt) ? sample.prompt.map((m) => m.content).join('\n') : sample.prompt;
  return {
    ...sample.extra,
    data_source: sample.data_source,
    solution_str: sample.solution_str,
    response: sample.solution_str,
    ground_truth: sample.ground_truth,
    extra_info: sample.extra_info,
    prompt,
  };
}

function lookup(vars: Record<string, unknown>, path: string): { found: boolean; value: unknown } {
  let value: unknown = vars;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !(key in (value as object))) return { found: false, value: undefined };
    value = (value as Record<string, unknown>)[key];
  }
  return { found: true, value };
}

/**
 * Fills `{name}` and `{extra_info.field}` in a judge prompt template; `{{` and `}}` are literal braces (for JSON examples).
 * A variable the sample lacks is an error naming it and the variables there are.
 */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][\w.]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    const { found, value } = lookup(vars, name!);
    if (!found)
      throw new Error(
        `the prompt template uses {${name}}, which this sample does not have (it has: ${Object.keys(vars)
          .filter((k) => vars[k] !== undefined)
          .join(', ')})`,
      );
    if (value === null || value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
