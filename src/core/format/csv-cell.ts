/** One CSV field, RFC 4180: quoted when it holds a comma, quote or line break, quotes doubled; objects as JSON. */
export function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
