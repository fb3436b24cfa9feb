import { z } from 'zod';
import { workspaceConfigSchema } from '../config/workspace-config';
import { runSpecSchema } from './run-spec';

/** JSON schemas generated from the zod schemas, by file name; contributed to VS Code for completion and validation. */
export function jsonSchemas(): Record<string, unknown> {
  return {
    medrl: z.toJSONSchema(workspaceConfigSchema, { io: 'input', unrepresentable: 'any' }),
    'run-spec': z.toJSONSchema(runSpecSchema, { io: 'input', unrepresentable: 'any' }),
  };
}
