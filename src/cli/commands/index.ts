import type { Command } from '../command';
import { schemaCommand } from './schema';
import { configCheckCommand, initCommand } from './config';
import { demoCommand } from './demo';
import { hostsListCommand } from './hosts';

/** Every `medrl` subcommand; a feature adds its commands here. */
export const commands: Command[] = [
  initCommand,
  demoCommand,
  configCheckCommand,
  hostsListCommand,
  schemaCommand,
];
