/**
 * Quotes a value for a POSIX shell: inside single quotes nothing is special, and a single quote is written as '\''.
 * Every value that reaches a shell on a host (paths, names, overrides) goes through here.
 */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new Error('a shell value cannot contain a NUL byte');
  if (/^[A-Za-z0-9_\-.,:/@%+=]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A command line from words, each quoted. */
export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}

/**
 * A path for a shell where a leading `~/` must still expand to the home folder: `"$HOME"/rest`, the rest quoted.
 */
export function shellPath(path: string): string {
  if (path === '~') return '"$HOME"';
  if (path.startsWith('~/')) return `"$HOME"/${shellQuote(path.slice(2))}`;
  return shellQuote(path);
}
