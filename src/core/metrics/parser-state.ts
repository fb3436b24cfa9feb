import { z } from 'zod';
import { FRAMEWORKS } from './headline-defs';

/*
 * The schemas of what a metrics cache file keeps of a parser (metrics-cache.ts reads it back through them). Apart from
 * the parser itself, so that the parse workers, which only produce these values, do not load zod.
 */

/** One metric's None values: how many, the first steps, the last step. */
export const missingEntrySchema = z.object({ count: z.number(), steps: z.array(z.number()), last: z.number() });
export type MissingEntry = z.infer<typeof missingEntrySchema>;

/**
 * What a metrics cache file keeps of a parse besides its series: all a parser needs to go on from the cached offset
 * (JSON: `null` for a format not known yet; TRL logs are never kept, see MetricLogParser.cacheState).
 */
export const parserStateSchema = z.object({
  framework: z.enum(FRAMEWORKS).nullable(),
  seen: z.array(z.enum(['console', 'jsonl'])),
  missing: z.array(z.tuple([z.string(), missingEntrySchema])),
});
export type ParserState = z.infer<typeof parserStateSchema>;
