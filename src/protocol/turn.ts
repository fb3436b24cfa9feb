import { z } from 'zod';

/** A conversation turn as the replay and review pages receive it (core/episodes/episode.ts `Turn`). */
const turnPart = z.object({
  kind: z.enum(['text', 'think', 'tool_call', 'tool_response']),
  text: z.string(),
  unclosed: z.boolean().optional(),
});
export const turn = z.object({
  role: z.string(),
  content: z.string(),
  parts: z.array(turnPart),
  name: z.string().optional(),
  environment: z.literal(true).optional(),
});
