import { parseArgs } from 'node:util';
import { commands } from './commands';
import { printError, UsageError, type Command, type CommandContext } from './command';
import { errorMessage, LocatedError } from '../core/errors/located-error';

const GLOBAL_HELP = `medrl: MedRL Studio on the command line (train medical LLMs with RL: verl, TRL)

Usage: medrl <command> [options]

Commands:
${commands.map((c) => `  ${c.path.join(' ').padEnd(22)} ${c.summary}`).join('\n')}

Every command takes --help, and --json for output a script can read.`;

function helpOf(cmd: Command): string {
  const opts = Object.entries(cmd.options ?? {}).map(
    ([name, o]) => `  --${name}${o.type === 'string' ? ' VALUE' : ''}${o.short ? ` (-${o.short})` : ''}`,
  );
  return [
    `medrl ${cmd.path.join(' ')}: ${cmd.summary}`,
    '',
    `Usage: ${cmd.usage}`,
    cmd.details ? `\n${cmd.details}` : '',
    opts.length ? `\nOptions:\n${opts.join('\n')}\n  --json\n  --help` : '\nOptions:\n  --json\n  --help',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

/** Finds the longest command path that prefixes argv. */
function findCommand(argv: string[]): { cmd: Command; args: string[] } | undefined {
  let best: { cmd: Command; args: string[] } | undefined;
  for (const cmd of commands) {
    if (cmd.path.every((w, i) => argv[i] === w) && (!best || cmd.path.length > best.cmd.path.length)) {
      best = { cmd, args: argv.slice(cmd.path.length) };
    }
  }
  return best;
}

export async function main(
  argv: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; cwd: string },
): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout.write(`${GLOBAL_HELP}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = commands.filter((c) => c.path[0] === argv[0]);
    io.stderr.write(
      group.length
        ? `medrl ${argv[0]}: which one? ${group.map((c) => c.path.join(' ')).join(', ')}\n`
        : `medrl: unknown command "${argv[0]}"\n\n${GLOBAL_HELP}\n`,
    );
    return 2;
  }
  const { cmd } = found;
  const dash = found.args.indexOf('--');
  const args = dash >= 0 ? found.args.slice(0, dash) : found.args;
  const rest = dash >= 0 ? found.args.slice(dash + 1) : [];
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...cmd.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    io.stderr.write(`medrl ${cmd.path.join(' ')}: ${errorMessage(err)}\n\n${helpOf(cmd)}\n`);
    return 2;
  }
  if (parsed.values.help) {
    io.stdout.write(`${helpOf(cmd)}\n`);
    return 0;
  }
  const ctx: CommandContext = {
    values: parsed.values,
    positionals: parsed.positionals,
    json: parsed.values.json === true,
    cwd: io.cwd,
    stdout: io.stdout,
    stderr: io.stderr,
    rest,
  };
  try {
    return await cmd.run(ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      printError(io, `medrl ${cmd.path.join(' ')}: ${err.message}\n\n${helpOf(cmd)}`);
      return 2;
    }
    if (ctx.json)
      io.stderr.write(
        `${JSON.stringify({ error: errorMessage(err), problems: err instanceof LocatedError ? err.problems : undefined })}\n`,
      );
    else printError(io, `medrl ${cmd.path.join(' ')}: ${errorMessage(err)}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`medrl: ${errorMessage(err)}\n`);
      process.exitCode = 1;
    },
  );
}
