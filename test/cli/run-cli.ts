import { Writable } from 'node:stream';
import { main } from '../../src/cli/main';

/** Runs the CLI in-process as a user would from `cwd`; returns the exit code and what it printed. */
export async function run(argv: string[], cwd = process.cwd()) {
  let out = '';
  let err = '';
  const stdout = new Writable({
    write(c, _e, cb) {
      out += String(c);
      cb();
    },
  });
  const stderr = new Writable({
    write(c, _e, cb) {
      err += String(c);
      cb();
    },
  });
  const code = await main(argv, { stdout, stderr, cwd });
  return { code, out, err };
}
