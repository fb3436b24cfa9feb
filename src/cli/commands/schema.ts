import type { Command } from '../command';
import { printJson } from '../command';
import { jsonSchemas } from '../../core/runs/json-schemas';

export const schemaCommand: Command = {
  path: ['schema'],
  summary: 'Print the JSON schemas of medrl.yaml and run specs',
  usage: 'medrl schema [NAME] [--json]',
  details: 'NAME: medrl or run-spec. Without NAME, an object of all schemas by name.',
  async run(ctx) {
    const all = jsonSchemas();
    const name = ctx.positionals[0];
    if (name !== undefined && !(name in all)) throw new Error(`unknown schema "${name}": one of ${Object.keys(all).join(', ')}`);
    printJson(ctx, name === undefined ? all : all[name]);
    return 0;
  },
};
