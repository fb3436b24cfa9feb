/**
 * Where a row is, as a person counts: rows and lines both from 1 ("row 3 (line 4)"; "row 3" for parquet, which has
 * no lines). `row` is the 0-based index the code keeps (previews and "go to row" use it).
 */
export function rowAndLine(at: { row?: number; line?: number }): string {
  if (at.row === undefined) return at.line !== undefined ? `line ${at.line}` : '';
  return at.line !== undefined ? `row ${at.row + 1} (line ${at.line})` : `row ${at.row + 1}`;
}

/** A record's place in its file: `file:line` where it has a line, else `file row N` (parquet), else the file alone. */
export function recordPlace(file: string, at: { row?: number; line?: number }): string {
  return `${file}${at.line !== undefined ? `:${at.line}` : at.row !== undefined ? ` ${rowAndLine({ row: at.row })}` : ''}`;
}

/** A dataset problem's row and field, "row 3, prompt[0].role" (its line is given beside it, as file:line or a range). */
export function rowAndField(p: { row?: number; field?: string }): string {
  return [rowAndLine({ row: p.row }), p.field].filter(Boolean).join(', ');
}
