/** C0 controls but \t and \n, DEL, and C1 controls (U+0080-U+009F: 0x9B alone starts a CSI sequence in some terminals). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from files and models made safe to print: every control character but tab and newline is shown as its escape
 * (`\x1b`, `\r`), so model output or a crafted file name cannot recolour, move the cursor, set the window title,
 * overwrite what was printed before it or write to the clipboard (OSC 52). Used for all human-readable CLI output;
 * --json output is escaped by JSON.stringify already.
 */
export function terminalText(s: string): string {
  return s.replace(CONTROL, (c) => (c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

/** An SGR sequence (`ESC [ 32 m`): colours and styles only, which cannot move the cursor or reach anything outside the text. */
const SGR = /\x1b\[[0-9;]*m/g;

/**
 * A log line made safe to print as terminalText does, but with its colours kept (trainers and Ray colour their
 * output): only SGR sequences pass; OSC (clipboard, title), screen clearing and cursor moves are shown as escapes.
 */
export function terminalLogText(s: string): string {
  if (!s.includes('\x1b')) return terminalText(s);
  let out = '';
  let last = 0;
  for (const m of s.matchAll(SGR)) {
    out += terminalText(s.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + terminalText(s.slice(last));
}

/** Text without its ANSI CSI sequences (colours, cursor moves), as trainers' logs and tqdm bars write them. */
export function stripAnsi(s: string): string {
  return s.includes('\x1b') ? s.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '') : s;
}
